-- A search reads the search vector of every one of the caller's archived
-- conversations. Left to the default storage, a vector of more than about
-- 2 KB (a ten-turn session) went to the TOAST table, and fetching it back
-- from there was a quarter of the search statement's time. Stored in the
-- row, it is read in place: the archived turns, which search never reads
-- from this table, leave the row first, and rows up to 4 KB stay whole.
-- A vector too big for that (sessions of more than about fifteen turns)
-- still goes to the TOAST table.
--
-- Rows archived before this migration keep their layout until rewritten;
-- VACUUM FULL public.conversation_history_archive moves them (see README).
alter table public.conversation_history_archive set (toast_tuple_target = 4096);
alter table public.conversation_history_archive alter column search_vector set storage main;
