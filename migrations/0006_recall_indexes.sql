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
