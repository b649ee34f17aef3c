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
