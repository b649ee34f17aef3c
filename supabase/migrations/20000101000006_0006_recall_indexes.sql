-- Migration 0006_recall_indexes of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0006_recall_indexes.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0006_recall_indexes') then
      raise exception 'migration 0006_recall_indexes was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000006; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Indexes for light recall, which ranks only the memories they point at,
-- and statistics that tell the planner a learner's memories all belong to
-- one facilitator (without them it expects one row where there are
-- hundreds, and picks plans that rescan them).

-- The most important memories of each type of a learner.
create index learner_memories_importance
  on public.learner_memories (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), type, importance desc, last_seen_at desc);

-- The memories a message's words are in.
create index learner_memories_words
  on public.learner_memories using gin (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), search_vector);

create statistics learner_memories_scope_stats (dependencies)
  on facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid))
  from public.learner_memories;

analyze public.learner_memories;

insert into public.memory_migrations (version) values ('0006_recall_indexes');
