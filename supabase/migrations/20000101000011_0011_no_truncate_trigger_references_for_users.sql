-- Migration 0011_no_truncate_trigger_references_for_users of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0011_no_truncate_trigger_references_for_users.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0011_no_truncate_trigger_references_for_users') then
      raise exception 'migration 0011_no_truncate_trigger_references_for_users was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000011; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- The roles a user can reach (anon, and authenticated, which Supabase's
-- Data API runs a signed-in user's requests as) hold only what row-level
-- security can govern: select, insert, update and delete. TRUNCATE would
-- empty a table for every tenant, RLS or not; TRIGGER would let a user add
-- code that runs as whoever writes the table next (the worker); REFERENCES
-- would let a user's table hold keys into ours. Supabase's default
-- privileges grant them all, for the tables here and for any created later
-- by the role that migrates.
revoke truncate, trigger, references on all tables in schema public from anon, authenticated;
alter default privileges in schema public revoke truncate, trigger, references on tables from anon, authenticated;

insert into public.memory_migrations (version) values ('0011_no_truncate_trigger_references_for_users');
