-- Migration 0008_archive_search_vector_in_row of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0008_archive_search_vector_in_row.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0008_archive_search_vector_in_row') then
      raise exception 'migration 0008_archive_search_vector_in_row was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000008; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- A search reads the search vector of every one of the caller's archived
-- conversations. Left to the default storage, a vector of more than about
-- 2 KB (a ten-turn session) went to the TOAST table, and fetching it back
-- from there was a quarter of the search statement's time. Stored in the
-- row, it is read in place: the archived turns, which search never reads
-- from this table, leave the row first, and rows up to 4 KB stay whole.
-- A vector too big for that (sessions of more than about fifteen turns)
-- still goes to the TOAST table.
--
-- Rows archived before this migration keep their layout until rewritten;
-- VACUUM FULL public.conversation_history_archive moves them (see README).
alter table public.conversation_history_archive set (toast_tuple_target = 4096);
alter table public.conversation_history_archive alter column search_vector set storage main;

insert into public.memory_migrations (version) values ('0008_archive_search_vector_in_row');
