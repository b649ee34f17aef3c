-- Search reads a facilitator's few active conversations through the owner
-- index and ranks them with the archive; the GIN index on their search
-- vector was never read, yet every post rewrote it two or three times.
drop index if exists public.conversation_updates_search;
