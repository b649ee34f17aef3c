-- Migration 0004_drop_active_search_index of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0004_drop_active_search_index.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0004_drop_active_search_index') then
      raise exception 'migration 0004_drop_active_search_index was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000004; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Search reads a facilitator's few active conversations through the owner
-- index and ranks them with the archive; the GIN index on their search
-- vector was never read, yet every post rewrote it two or three times.
drop index if exists public.conversation_updates_search;

insert into public.memory_migrations (version) values ('0004_drop_active_search_index');
