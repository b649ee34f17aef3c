-- Under row-level security the planner may not use the words' index at
-- all: @@ is not leakproof, so a policy keeps it from being an index
-- condition, and Postgres would read every archived conversation of the
-- facilitator to test it (measured: 50 ms for 10,000 of them, where the
-- index takes a millisecond). Search finds its candidates through this
-- view instead: the caller's archived conversations, filtered by the
-- caller as the policy filters them, owned by the table's owner, to whom
-- no policy applies, so the index is used. It lives in private, out of
-- the Data API's reach, and only the service's role may read it.
create view private.caller_archive_words as
  select a.facilitator_id, a.id, a.learner_id, a.search_vector
  from public.conversation_history_archive a
  where a.facilitator_id = (select auth.uid());

grant usage on schema private to memory_service;
grant select on private.caller_archive_words to memory_service;
