-- Migration 0027_account_import of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0027_account_import.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0027_account_import') then
      raise exception 'migration 0027_account_import was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000027; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Importing an account archive (POST /api/import) writes rows the service
-- otherwise leaves to the database: archived conversations, with their
-- turns already archived, and history rows. Rows with an identity id get
-- an import key, derived from the importing facilitator and the exported
-- id, so importing the same archive again finds them and stores nothing
-- twice.
alter table public.conversation_turns add column import_key uuid;
alter table public.memory_history add column import_key uuid;
create unique index conversation_turns_import_key on public.conversation_turns (facilitator_id, import_key)
  where import_key is not null;
create unique index memory_history_import_key on public.memory_history (facilitator_id, import_key)
  where import_key is not null;

-- An imported turn may arrive archived; any other is appended active.
alter policy conversation_turns_insert on public.conversation_turns
  with check ((select auth.uid()) = facilitator_id and (archive_id is null or import_key is not null));

-- The caller's own archived conversations, brought from another account.
grant insert on public.conversation_history_archive to memory_service;
create policy archive_import on public.conversation_history_archive for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);

insert into public.memory_migrations (version) values ('0027_account_import');
