-- private.range_linked_archives (migration 0055) in statements that each
-- name one facilitator: Citus runs such a statement on the worker holding
-- the facilitator's shards, where one statement over every facilitator's
-- turns and archives cannot be planned ("could not create distributed
-- plan"). What it does is unchanged: a linked archive is given the range
-- of its linked turns' ids when no unlinked turn of its conversation lies
-- below the range's end. With no list it takes every facilitator who has
-- an archive without a range.
create or replace function private.range_linked_archives(p_facilitators uuid[]) returns bigint
language plpgsql
set search_path = ''
as $$
declare
  f uuid;
  ranged bigint;
  total bigint := 0;
begin
  for f in
    select distinct a.facilitator_id
    from public.conversation_history_archive a
    where a.last_turn_id is null and (p_facilitators is null or a.facilitator_id = any(p_facilitators))
  loop
    with spans as (
      select t.archive_id, min(t.id) as first_id, max(t.id) as last_id
      from public.conversation_turns t
      where t.facilitator_id = f and t.archive_id is not null
      group by t.archive_id
    ),
    -- Each conversation's lowest unlinked turn: in one pass, not one
    -- search per archive.
    lowest_unlinked as (
      select coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid) as learner_key,
        min(t.id) as id
      from public.conversation_turns t
      where t.facilitator_id = f and t.archive_id is null
      group by 1
    ),
    candidates as (
      select a.id, s.first_id, s.last_id
      from spans s
      join public.conversation_history_archive a on a.facilitator_id = f and a.id = s.archive_id
      left join lowest_unlinked u
        on u.learner_key = coalesce(a.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      where a.last_turn_id is null and (u.id is null or u.id > s.last_id)
    )
    update public.conversation_history_archive a
    set first_turn_id = c.first_id, last_turn_id = c.last_id
    from candidates c
    where a.facilitator_id = f and a.id = c.id;
    get diagnostics ranged = row_count;
    total := total + ranged;
  end loop;
  return total;
end
$$;
