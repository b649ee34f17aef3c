-- Search reads the turns of each active conversation in its results (for
-- the turns that match and the snippet) through the index of a
-- conversation's turns by id, (facilitator, learner key, id). Under
-- row-level security the planner may not use that index for the learner:
-- its key is coalesce(learner_id, nil), an expression the planner will not
-- evaluate before the policy, as it cannot tell it leaks nothing. It read
-- instead every turn of the facilitator's above the conversation's bound
-- (measured: 2,353 turns, 1.7 ms, for each active result of a teacher
-- with 30 learners). As with the archived words (migration 0038), search
-- reads them through a view: the caller's turns, filtered by the caller as
-- the policy filters them, owned by the table's owner, to whom no policy
-- applies. It lives in private, out of the Data API's reach, and only the
-- service's role may read it.
create view private.caller_turns as
  select t.facilitator_id, t.learner_id, t.id, t.archive_id, t.client_turn_id, t.role, t.content,
    t.created_at, t.content_vector
  from public.conversation_turns t
  where t.facilitator_id = (select auth.uid());

grant select on private.caller_turns to memory_service;
