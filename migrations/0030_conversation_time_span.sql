-- The active conversation records the span of time its turns cover, as an
-- archived one does (migration 0029): the earliest and the latest of the
-- active segment's turns' times. A post widens it by the turns it adds, in
-- the update it makes anyway; archiving, which takes the oldest turns
-- away, recomputes it from the turns left active, as it recomputes their
-- search words. Search then reads it from the row: finding it from the
-- turns cost each search about 0.2 ms of its 5.

alter table public.conversation_updates
  add column first_turn_at timestamptz,
  add column last_turn_at timestamptz,
  add constraint conversation_time_span_in_order check (first_turn_at <= last_turn_at);

update public.conversation_updates c
set (first_turn_at, last_turn_at) = (
  select min(t.created_at), max(t.created_at)
  from public.conversation_turns t
  where t.facilitator_id = c.facilitator_id
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      = coalesce(c.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
    and t.archive_id is null);

-- Auto-archive as in migration 0016, and then the turns left active are
-- all that turns_vector, turns_bytes and the time span hold.
create or replace function public.conversation_updates_auto_archive() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  segment integer := public.archive_turn_limit();
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
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      = coalesce(new.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
    and t.archive_id is null;
  return new;
end
$$;
