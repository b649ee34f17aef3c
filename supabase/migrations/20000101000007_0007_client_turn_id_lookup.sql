-- Migration 0007_client_turn_id_lookup of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0007_client_turn_id_lookup.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0007_client_turn_id_lookup') then
      raise exception 'migration 0007_client_turn_id_lookup was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000007; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Resent turns are found by their client ids. The old index led with the
-- conversation (facilitator, learner), and prepared statements run a
-- generic plan that expects one turn per conversation: it read every turn
-- of the conversation, archived ones included, and filtered the ids, so a
-- post cost more the longer the conversation had run. Led by the
-- facilitator and the client id, the lookup is one index probe per posted
-- id; the learner is checked on the few rows found.
create index conversation_turns_owner_client_id
  on public.conversation_turns (facilitator_id, client_turn_id) where client_turn_id is not null;
drop index public.conversation_turns_client_id;

-- A conversation's turns all belong to one facilitator; without this the
-- planner expects one turn per conversation where there are hundreds.
create statistics conversation_turns_scope_stats (dependencies)
  on facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid))
  from public.conversation_turns;

analyze public.conversation_turns;

insert into public.memory_migrations (version) values ('0007_client_turn_id_lookup');
