-- Search corrects a word the facilitator never used to the closest word
-- they did (postgres/search.go). Read by the service under row-level
-- security, that comparison could not use the trigram index: the planner
-- evaluates a condition ahead of a policy, where an index serves it, only
-- if it cannot leak, and pg_trgm's similarity operator is not marked so.
-- So every correction compared the typed word with every word of the
-- facilitator's vocabulary: about 1 ms a thousand words, 8 ms for each
-- unknown word of a teacher with 8,000 words, 20 ms at the cap (20,000).
--
-- The service reads the vocabulary for corrections through a view instead,
-- as it reads turns and archives (migrations 0038, 0058 to 0060): the
-- caller's words, filtered by the caller as the policy filters them, owned
-- by the table's owner, to whom no policy applies; in private, out of the
-- Data API's reach, readable by the service's role only.
create view private.caller_words as
  select v.facilitator_id, v.word
  from public.search_vocabulary v
  where v.facilitator_id = (select auth.uid());

grant select on private.caller_words to memory_service;

-- Through the view the trigram index may take both the facilitator and the
-- similarity, but the planner still chose to read all of the facilitator's
-- words through a B-tree index that starts with facilitator_id and compare
-- each: it prices a similarity as one cheap comparison, and a prepared
-- search's generic plan, made for an average facilitator, expects a
-- thousand words. So no B-tree index of the vocabulary starts with the
-- facilitator any more. The primary key puts the word first: every lookup
-- of known words names both (the collect-words trigger, search's check
-- for unknown words), and the distribution column stays in it for Citus.
-- The index of the oldest words served only the trim past the cap (one
-- post in about 2,000 words added past 20,000); the trim now finds the
-- facilitator's words through the trigram index and sorts them.
alter table public.search_vocabulary drop constraint search_vocabulary_pkey;

alter table public.search_vocabulary add constraint search_vocabulary_pkey primary key (word, facilitator_id);

drop index public.search_vocabulary_oldest;

-- New words go straight into the trigram index rather than into its list
-- of pending entries, which every scan of the index reads whole (up to
-- 4 MB by default) until a vacuum merges it: with it, a correction read
-- every word added since the last vacuum, and the planner, seeing the
-- list, chose to read the whole table instead. A post adds few new words
-- (the collect-words trigger skips the known ones), so inserting them into
-- the index directly costs it little; the words pending now are merged.
alter index public.search_vocabulary_trgm set (fastupdate = off);

select gin_clean_pending_list('public.search_vocabulary_trgm'::regclass);
