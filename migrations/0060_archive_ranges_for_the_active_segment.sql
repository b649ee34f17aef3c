-- Where a conversation's active segment starts is the highest range of its
-- archives (migration 0037), found through the index of the archives'
-- ranges, (facilitator, learner key, last turn). Read by the service under
-- row-level security, that index served the facilitator alone (the
-- learner key is coalesce(learner_id, nil), which the planner will not
-- evaluate ahead of the policy: see migrations 0058 and 0059), so finding
-- the bound read every ranged archive of the facilitator's (10,000 rows,
-- 10 ms, for each active conversation among a search's results, the
-- slowest searches of a facilitator with 10,000 archived conversations).
-- The service reads the ranges through a view instead: the caller's
-- archives, filtered by the caller as the policy filters them, owned by
-- the table's owner, to whom no policy applies. It lives in private, out
-- of the Data API's reach, and only the service's role may read it.
create view private.caller_archive_ranges as
  select a.facilitator_id, a.learner_id, a.id, a.first_turn_id, a.last_turn_id
  from public.conversation_history_archive a
  where a.facilitator_id = (select auth.uid());

grant select on private.caller_archive_ranges to memory_service;
