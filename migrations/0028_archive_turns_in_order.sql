-- An archived conversation is read back a page at a time, its turns in the
-- order they were said (GET /api/archives/{id}). The archive's index held
-- its turns in no order, so the generic plan of a page walked every turn of
-- the facilitator in order and skipped the other conversations' turns: a
-- page cost more the more the facilitator had ever said. With the turn's
-- id last, a page is one ordered probe of the archive's own turns. Search,
-- which finds an archive's best-matching turns, reads it as it read the
-- index it replaces.
create index conversation_turns_archive_in_order
  on public.conversation_turns (facilitator_id, archive_id, id) where archive_id is not null;
drop index public.conversation_turns_archive;
