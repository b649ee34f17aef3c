-- Migration 0016_segments_bounded_in_bytes of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0016_segments_bounded_in_bytes.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0016_segments_bounded_in_bytes') then
      raise exception 'migration 0016_segments_bounded_in_bytes was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000016; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- A segment of a conversation ends at 50 turns, or sooner when its turns'
-- text passes 200,000 bytes. A search vector holds at most 1 MB, and text
-- of long made-up words takes up to about three times its size in one;
-- 50 turns of 20,000 characters each, within the API's limits, passed it,
-- and from then on every post to that conversation failed, as did clearing
-- it. Now no vector is built from more than 200,000 bytes of turns (at most
-- about 700 KB), so no segment, active or archived, can reach the limit.
-- Conversations of ordinary length (50 turns of a few hundred characters)
-- never meet the byte limit and archive every 50 turns as before.

-- The active segment's bytes, kept by every post and by archiving.
alter table public.conversation_updates add column turns_bytes bigint not null default 0;
update public.conversation_updates c
set turns_bytes = coalesce((
  select sum(octet_length(t.content))
  from public.conversation_turns t
  where t.facilitator_id = c.facilitator_id
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      = coalesce(c.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
    and t.archive_id is null), 0);

create function public.segment_byte_limit() returns bigint
language sql immutable
as $$ select 200000::bigint $$;

-- Moves the oldest active turns of a conversation into a new archive row
-- with the given summary: at most max_turns of them, and no more than
-- max_bytes of text unless the first turn alone is larger (a turn is at
-- most 20,000 characters). Returns how many turns and bytes it moved.
create function public.archive_oldest_turns(
  p_facilitator_id uuid, p_learner_id uuid, p_summary text, p_max_turns integer, p_max_bytes bigint,
  out moved_turns integer, out moved_bytes bigint
)
language plpgsql security definer
set search_path = ''
as $$
declare
  moved_ids bigint[];
  new_archive_id uuid := gen_random_uuid();
begin
  select array_agg(t.id order by t.id), coalesce(sum(t.bytes), 0) into moved_ids, moved_bytes
  from (
    select a.id, a.bytes from (
      select id, octet_length(content)::bigint as bytes,
        sum(octet_length(content)) over (order by id) as running,
        row_number() over (order by id) as n
      from public.conversation_turns
      where facilitator_id = p_facilitator_id
        and coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
          = coalesce(p_learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
        and archive_id is null
    ) a
    where a.n <= p_max_turns and (a.n = 1 or a.running <= p_max_bytes)
  ) t;

  moved_turns := coalesce(cardinality(moved_ids), 0);
  if moved_turns = 0 then
    return;
  end if;

  insert into public.conversation_history_archive
    (id, facilitator_id, learner_id, summary, conversation_turns, turn_count)
  select new_archive_id, p_facilitator_id, p_learner_id, p_summary,
    jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'id', t.client_turn_id, 'role', t.role, 'content', t.content,
      'created_at', t.created_at)) order by t.id),
    count(*)
  from public.conversation_turns t
  where t.facilitator_id = p_facilitator_id and t.id = any(moved_ids);

  update public.conversation_turns
  set archive_id = new_archive_id
  where facilitator_id = p_facilitator_id and id = any(moved_ids);
end
$$;

revoke execute on function public.archive_oldest_turns(uuid, uuid, text, integer, bigint) from public, anon, authenticated;

-- Auto-archive: while the active segment holds more turns than the limit,
-- or more bytes, its oldest turns are archived with the current summary;
-- then the turns left active are all that turns_vector holds.
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
      coalesce(sum(octet_length(t.content)), 0)
    into new.turns_vector, new.turns_bytes
  from public.conversation_turns t
  where t.facilitator_id = new.facilitator_id
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      = coalesce(new.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
    and t.archive_id is null;
  return new;
end
$$;

drop trigger auto_archive on public.conversation_updates;
create trigger auto_archive
before update of turn_count, turns_bytes on public.conversation_updates
for each row
when (new.turn_count > public.archive_turn_limit() or new.turns_bytes > public.segment_byte_limit())
execute function public.conversation_updates_auto_archive();

-- Clearing archives the whole active segment, in as many archive rows as
-- its bytes need.
create or replace function public.conversation_updates_archive_on_delete() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  moved record;
begin
  if not exists (select 1 from auth.users where id = old.facilitator_id) then
    return old;
  end if;
  if old.learner_id is not null and not exists (
    select 1 from public.learners
    where facilitator_id = old.facilitator_id and id = old.learner_id
  ) then
    return old;
  end if;
  loop
    moved := public.archive_oldest_turns(old.facilitator_id, old.learner_id, old.summary, 2147483647,
      public.segment_byte_limit());
    exit when moved.moved_turns = 0;
  end loop;
  return old;
end
$$;

drop function public.archive_active_turns(uuid, uuid, text, integer);

insert into public.memory_migrations (version) values ('0016_segments_bounded_in_bytes');
