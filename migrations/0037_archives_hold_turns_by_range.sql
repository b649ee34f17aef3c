-- Archiving a segment stamped archive_id on each of its turns: 50 rows
-- rewritten with all their indexes, about a third of an archiving post's
-- time. An archive now records the range of log ids its turns span in its
-- conversation instead, and no turn is updated.
--
-- Which turns an archive holds: the turns linked to it by archive_id
-- (written by imports, and by archiving before this migration), and, of
-- the turns linked to none, those of its conversation whose ids fall in its
-- range. A conversation's active turns are the turns linked to no archive
-- above the highest range of its archives. Archiving always takes the
-- oldest active turns, with the conversation's row locked, and posts add
-- turns under the same lock, so a conversation's ranges never overlap and
-- lie below its active turns. An imported turn keeps its link: turns an
-- import writes while a post adds others to the same conversation
-- interleave in the log, which no range could tell apart.
alter table public.conversation_history_archive
  add column first_turn_id bigint,
  add column last_turn_id bigint,
  add constraint archive_turn_range
    check ((first_turn_id is null) = (last_turn_id is null) and first_turn_id <= last_turn_id);

-- A conversation's highest range, where its active turns begin.
create index archive_turn_ranges on public.conversation_history_archive
  (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), last_turn_id)
  where last_turn_id is not null;

-- The archive a turn belongs to, or null while it is active: archive_of(t),
-- also written t.archive_of, a function of the row as search_vector(c) is
-- (migration 0009). Exports and the memory's sources read it.
create function public.archive_of(t public.conversation_turns) returns uuid
language sql stable
as $$
  select coalesce(t.archive_id, (
    select a.id from (
      select h.id, h.first_turn_id from public.conversation_history_archive h
      where h.facilitator_id = t.facilitator_id and h.last_turn_id >= t.id
        and coalesce(h.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
          = coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      order by h.last_turn_id
      limit 1) a
    where a.first_turn_id <= t.id))
$$;

-- Moves the oldest active turns of a conversation into a new archive row
-- with the given summary, as in migration 0016: at most max_turns of them,
-- and no more than max_bytes of text unless the first turn alone is
-- larger. Returns how many turns and bytes it moved.
create or replace function public.archive_oldest_turns(
  p_facilitator_id uuid, p_learner_id uuid, p_summary text, p_max_turns integer, p_max_bytes bigint,
  out moved_turns integer, out moved_bytes bigint
)
language plpgsql security definer
set search_path = ''
as $$
declare
  learner_key uuid := coalesce(p_learner_id, '00000000-0000-0000-0000-000000000000'::uuid);
  first_id bigint;
  last_id bigint;
begin
  select min(a.id), max(a.id), count(*), coalesce(sum(a.bytes), 0)
    into first_id, last_id, moved_turns, moved_bytes
  from (
    select id, octet_length(content)::bigint as bytes,
      sum(octet_length(content)) over (order by id) as running,
      row_number() over (order by id) as n
    from public.conversation_turns
    where facilitator_id = p_facilitator_id
      and coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid) = learner_key
      and archive_id is null
      and id > (select coalesce(max(h.last_turn_id), 0) from public.conversation_history_archive h
        where h.facilitator_id = p_facilitator_id
          and coalesce(h.learner_id, '00000000-0000-0000-0000-000000000000'::uuid) = learner_key
          and h.last_turn_id is not null)
  ) a
  where a.n <= p_max_turns and (a.n = 1 or a.running <= p_max_bytes);

  if moved_turns = 0 then
    return;
  end if;

  insert into public.conversation_history_archive
    (facilitator_id, learner_id, summary, conversation_turns, turn_count, first_turn_id, last_turn_id)
  select p_facilitator_id, p_learner_id, p_summary,
    jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'id', t.client_turn_id, 'role', t.role, 'content', t.content,
      'created_at', t.created_at)) order by t.id),
    count(*), first_id, last_id
  from public.conversation_turns t
  where t.facilitator_id = p_facilitator_id
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid) = learner_key
    and t.archive_id is null
    and t.id between first_id and last_id;
end
$$;

-- Auto-archive as in migration 0030, and then the turns left active are
-- all that turns_vector, turns_bytes and the time span hold.
create or replace function public.conversation_updates_auto_archive() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  segment integer := public.archive_turn_limit();
  learner_key uuid := coalesce(new.learner_id, '00000000-0000-0000-0000-000000000000'::uuid);
  moved record;
begin
  while new.turn_count > segment or new.turns_bytes > public.segment_byte_limit() loop
    moved := public.archive_oldest_turns(new.facilitator_id, new.learner_id, new.summary, segment,
      public.segment_byte_limit());
    exit when moved.moved_turns = 0;
    new.turn_count := greatest(new.turn_count - moved.moved_turns, 0);
    new.turns_bytes := greatest(new.turns_bytes - moved.moved_bytes, 0);
  end loop;
  select coalesce(to_tsvector('english', string_agg(t.content, ' ' order by t.id)), ''::tsvector),
      coalesce(sum(octet_length(t.content)), 0), min(t.created_at), max(t.created_at)
    into new.turns_vector, new.turns_bytes, new.first_turn_at, new.last_turn_at
  from public.conversation_turns t
  where t.facilitator_id = new.facilitator_id
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid) = learner_key
    and t.archive_id is null
    and t.id > (select coalesce(max(h.last_turn_id), 0) from public.conversation_history_archive h
      where h.facilitator_id = new.facilitator_id
        and coalesce(h.learner_id, '00000000-0000-0000-0000-000000000000'::uuid) = learner_key
        and h.last_turn_id is not null);
  return new;
end
$$;

-- Active turns are read from the conversation's highest range on, through
-- the index of the conversation's turns by id; the index of the turns
-- linked to no archive, which every stored turn entered, is no longer read.
drop index public.conversation_turns_active;
