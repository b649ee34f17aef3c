-- Search no longer reads every archived conversation of the facilitator:
-- it finds its candidates by indexes (postgres/search.go).

-- Those holding a question's rare words come from the index over the
-- archived conversations' words (archive_search, migration 0002), which a
-- search must read whole, pending entries included: new entries wait in a
-- pending list, read in full by every search, until vacuum or the list's
-- limit merges them into the index. At the default limit of 4 MB, about
-- 800 archived conversations' words, that was a list every search read
-- through, and whose size the planner weighs when it chooses this index;
-- at 256 kB, about 50, the archiving post that passes it merges them
-- (measured: no dearer per archived conversation on average).
alter index public.archive_search set (gin_pending_list_limit = 256);

-- Those held in the time a question names are the newest of them by when
-- their last turn was said, from this index, reading the few that end in
-- that time however long the history.
create index archive_owner_last_turn
  on public.conversation_history_archive (facilitator_id, last_turn_at);
