-- Search corrects a word the facilitator never used to the closest word
-- they did use: the vocabulary's words like it (pg_trgm's %), nearest first.
-- The trigram index over (facilitator, word) answers that in about 0.3 to
-- 0.6 ms whatever the vocabulary's size, and whatever the whole table's
-- (measured with 1 and 5 times the benchmark's data). Search could not use
-- it: under row-level security the planner may not use % as an index
-- condition (it cannot tell the operator leaks nothing), so it read every
-- word of the facilitator's through the primary key and compared each,
-- about 1 ms per thousand words: 8 ms for each misspelled word of a
-- teacher with 8,000 words, 20 ms at the vocabulary's cap (migration 0014).
-- As with the archived words (migration 0038), search reads them through
-- a view: the caller's words, filtered by the caller as the policy filters
-- them, owned by the table's owner, to whom no policy applies. It lives in
-- private, out of the Data API's reach, and only the service's role may
-- read it. (A function could have planned the lookup without the primary
-- key, but Citus cannot run a function that reads a distributed table
-- from inside a statement it sends to a shard.)
create view private.caller_vocabulary as
  select v.facilitator_id, v.word
  from public.search_vocabulary v
  where v.facilitator_id = (select auth.uid());

grant select on private.caller_vocabulary to memory_service;
