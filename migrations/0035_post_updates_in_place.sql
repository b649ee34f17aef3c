-- Two costs every post paid for rows it updates.
--
-- The auto-archive trigger's condition called archive_turn_limit() and
-- segment_byte_limit(), SQL functions that Postgres cannot inline into a
-- trigger's WHEN clause: each post parsed and planned both again, which
-- was about 2% of a post's time in Postgres. The condition now reads the
-- same setting and the same limit directly; the trigger's body, which runs
-- only when a segment is archived, still calls the functions, which stay
-- the one definition of both limits (migrations/triggers_test.go checks
-- that the two agree).
drop trigger auto_archive on public.conversation_updates;
create trigger auto_archive
before update of turn_count, turns_bytes on public.conversation_updates
for each row
when (new.turn_count > coalesce(nullif(current_setting('mentor.archive_turns', true), '')::integer, 50)
  or new.turns_bytes > 200000)
execute function public.conversation_updates_auto_archive();

-- Every post moves its live session's last_activity_at, which the idle
-- sessions' index held, so every post's session update wrote a new entry
-- in each of the table's four indexes instead of updating the row in
-- place (no update of the session had ever been a HOT update). The sweep
-- that ends idle sessions reads the live ones through the index of live
-- sessions instead: sessions idle past the limit are ended every minute,
-- so the live ones are about as many as the sessions held in the last
-- half hour.
drop index public.mentor_sessions_idle;
