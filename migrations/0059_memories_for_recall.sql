-- Recall finds its candidates among the learner's memories by their words
-- through the words' index, (facilitator, learner key, words). Under
-- row-level security the planner may use that index for the facilitator
-- alone: neither the learner key, coalesce(learner_id, nil), nor @@ is a
-- condition it will evaluate ahead of the policy (see migrations 0038 and
-- 0058), so it read every memory of the facilitator's, every learner's,
-- and tested the words on each. Recall reads its candidates through a view
-- instead: the caller's memories, filtered by the caller as the policy
-- filters them, owned by the table's owner, to whom no policy applies. It
-- lives in private, out of the Data API's reach, and only the service's
-- role may read it.
create view private.caller_memories as
  select m.facilitator_id, m.learner_id, m.id, m.type, m.status, m.confidence, m.last_seen_at, m.metadata,
    m.search_vector, m.embedding_model, m.embedding
  from public.learner_memories m
  where m.facilitator_id = (select auth.uid());

grant select on private.caller_memories to memory_service;
