-- Archives made before migration 0037 hold their turns by archive_id and
-- have no range of log ids. A conversation's active turns are its unlinked
-- turns above its highest range (0037), so for a conversation whose
-- archives all predate 0037 there was no lower bound: every search that
-- found it, every archiving post and every clear read all of its turns
-- ever stored (measured: 200 ms for a search of a facilitator with 500k
-- turns, where the active turns are a few dozen).
--
-- A linked archive is given the range of its linked turns' ids when no
-- unlinked turn of its conversation lies below the range's end: it then
-- holds exactly the turns it held (none unlinked is in its range), and the
-- conversation's active turns stay the same (none lies below the new
-- bound). That is every archive archiving made, which took the oldest
-- active turns in order; an archive an import wrote while posts added
-- turns to the same conversation may keep no range, and its conversation
-- is then read from an earlier bound, as before, correctly.
create function private.range_linked_archives(p_facilitators uuid[]) returns bigint
language sql
set search_path = ''
as $$
  with spans as (
    select t.facilitator_id, t.archive_id, min(t.id) as first_id, max(t.id) as last_id
    from public.conversation_turns t
    where t.archive_id is not null and (p_facilitators is null or t.facilitator_id = any(p_facilitators))
    group by t.facilitator_id, t.archive_id
  ),
  -- Each conversation's lowest unlinked turn: in one pass, not one search
  -- per archive.
  lowest_unlinked as (
    select t.facilitator_id, coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid) as learner_key,
      min(t.id) as id
    from public.conversation_turns t
    where t.archive_id is null and (p_facilitators is null or t.facilitator_id = any(p_facilitators))
    group by 1, 2
  ),
  candidates as (
    select a.facilitator_id, a.id, s.first_id, s.last_id
    from spans s
    join public.conversation_history_archive a on a.facilitator_id = s.facilitator_id and a.id = s.archive_id
    left join lowest_unlinked u on u.facilitator_id = a.facilitator_id
      and u.learner_key = coalesce(a.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
    where a.last_turn_id is null and (u.id is null or u.id > s.last_id)
  ),
  ranged as (
    update public.conversation_history_archive a
    set first_turn_id = c.first_id, last_turn_id = c.last_id
    from candidates c
    where a.facilitator_id = c.facilitator_id and a.id = c.id
    returning 1
  )
  select count(*) from ranged
$$;

select private.range_linked_archives(null);
