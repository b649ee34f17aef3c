-- Search corrects a word the facilitator never used to the closest word
-- they did use: the vocabulary's words like it (pg_trgm's %), nearest first.
-- The trigram index over (facilitator, word) answers that in about 0.3 to
-- 0.6 ms whatever the vocabulary's size, and whatever the whole table's
-- (measured with 1 and 5 times the benchmark's data). Search did not use
-- it: under row-level security the planner may not use % as an index
-- condition (it cannot tell the operator leaks nothing), so it read every
-- word of the facilitator's through the primary key and compared each,
-- about 1 ms per thousand words: 8 ms for each misspelled word of a
-- teacher with 8,000 words, 20 ms at the vocabulary's cap (migration 0014).
-- The planner also preferred that scan for vocabularies of a few thousand
-- words with no policy in the way (it prices % as one cheap comparison),
-- and a generic plan would prefer it for every facilitator.
--
-- So the lookup is a function that reads as the table's owner, to whom no
-- policy applies, only the caller's own words (as the policy would), and
-- plans without index scans, which leaves the trigram index's bitmap scan
-- as its way to the words. It lives in private, out of the Data API's
-- reach, and only the service's role may call it.
create function private.closest_word(facilitator uuid, misspelled text) returns text
language plpgsql stable security definer
set search_path = ''
set enable_indexscan = off
set enable_indexonlyscan = off
as $$
begin
  return (
    select v.word from public.search_vocabulary v
    where facilitator = auth.uid() and v.facilitator_id = facilitator
      and v.word operator(extensions.%) misspelled
    -- The word breaks ties, so equally close words resolve the same way
    -- every time.
    order by v.word operator(extensions.<->) misspelled, v.word
    limit 1);
end
$$;

revoke execute on function private.closest_word(uuid, text) from public;
grant execute on function private.closest_word(uuid, text) to memory_service;
