-- Migration 0002_conversation_memory of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0002_conversation_memory.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0002_conversation_memory') then
      raise exception 'migration 0002_conversation_memory was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000002; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- The conversation memory: learners, one active conversation per
-- (facilitator, learner or none), an append-only log of every turn received,
-- and the archive of finished segments. Every table carries facilitator_id in
-- its keys so the data can later be sharded by facilitator.

create extension if not exists pg_trgm with schema extensions;
create extension if not exists btree_gin with schema extensions;

create table public.learners (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  created_at timestamptz not null default now(),
  primary key (facilitator_id, id)
);

create table public.conversation_updates (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  summary text,
  -- The model failed or was not asked yet: the next update catches up.
  summary_stale boolean not null default false,
  -- The last conversation_turns.id the summary covers, so a summary computed
  -- from older turns never overwrites a newer one.
  summarized_turn_id bigint not null default 0,
  recent_turns jsonb not null default '[]' check (jsonb_typeof(recent_turns) = 'array'),
  -- Turns in the active segment, that is, not archived yet.
  turn_count integer not null default 0 check (turn_count >= 0),
  -- Summary (weight A) and active-segment turns (weight B), kept current by
  -- a trigger so search treats active and archived conversations alike.
  search_vector tsvector not null default ''::tsvector,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (facilitator_id, id),
  -- NULLS NOT DISTINCT: one general conversation (learner_id null) per
  -- facilitator, which a plain unique constraint would not enforce.
  constraint conversation_updates_one_per_learner
    unique nulls not distinct (facilitator_id, learner_id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

-- Every turn a client ever sent, in arrival order. Rows are never updated by
-- callers: only the archiving triggers stamp archive_id, which moves a turn
-- from the active segment to an archived one.
create table public.conversation_turns (
  id bigint generated always as identity,
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  archive_id uuid,
  role text not null check (role in ('user', 'assistant')),
  content text not null,
  client_turn_id text check (char_length(client_turn_id) <= 200),
  created_at timestamptz not null default now(),
  content_vector tsvector generated always as (to_tsvector('english', content)) stored,
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

create table public.conversation_history_archive (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  summary text,
  conversation_turns jsonb not null default '[]' check (jsonb_typeof(conversation_turns) = 'array'),
  turn_count integer not null check (turn_count >= 0),
  archived_at timestamptz not null default now(),
  search_vector tsvector generated always as (
    setweight(to_tsvector('english', coalesce(summary, '')), 'A') ||
    setweight(jsonb_to_tsvector('english',
      jsonb_path_query_array(conversation_turns, '$[*].content'), '["string"]'), 'B')
  ) stored,
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

-- Words seen in a facilitator's turns, so a misspelled search keyword can be
-- corrected to the nearest word that facilitator actually used.
create table public.search_vocabulary (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  word text not null,
  primary key (facilitator_id, word)
);

-- Indexes, one per query the service makes.
create index learners_owner_created on public.learners (facilitator_id, created_at);
-- Turns are looked up per conversation, the null learner included, hence
-- the coalesce to the nil uuid (the service queries with the same expression).
create index conversation_turns_active
  on public.conversation_turns (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), id) where archive_id is null;
create index conversation_turns_scope_recent
  on public.conversation_turns (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), id desc);
create index conversation_turns_client_id
  on public.conversation_turns (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), client_turn_id)
  where client_turn_id is not null;
create index conversation_turns_archive
  on public.conversation_turns (facilitator_id, archive_id) where archive_id is not null;
create index conversation_updates_owner_recent
  on public.conversation_updates (facilitator_id, updated_at desc);
create index conversation_updates_search
  on public.conversation_updates using gin (facilitator_id, search_vector);
create index archive_owner_recent
  on public.conversation_history_archive (facilitator_id, archived_at desc);
create index archive_owner_learner_recent
  on public.conversation_history_archive (facilitator_id, learner_id, archived_at desc);
create index archive_search
  on public.conversation_history_archive using gin (facilitator_id, search_vector);
create index search_vocabulary_trgm
  on public.search_vocabulary using gin (facilitator_id, word extensions.gin_trgm_ops);

-- The turn count past which a segment is archived. The service sets
-- mentor.archive_turns per transaction from MEMORY_ARCHIVE_TURNS; anything
-- else writing here gets the default of 50.
create function public.archive_turn_limit() returns integer
language sql stable
set search_path = ''
as $$
  select coalesce(nullif(current_setting('mentor.archive_turns', true), '')::integer, 50)
$$;

-- Moves the oldest active turns of a conversation (at most max_turns of
-- them) into a new archive row with the given summary. Returns how many
-- turns it moved. Runs as the owner because callers may not update the turn
-- log; it only ever touches the conversation it is given.
create function public.archive_active_turns(
  p_facilitator_id uuid, p_learner_id uuid, p_summary text, p_max_turns integer
) returns integer
language plpgsql security definer
set search_path = ''
as $$
declare
  moved_ids bigint[];
  new_archive_id uuid := gen_random_uuid();
begin
  select array_agg(t.id order by t.id) into moved_ids
  from (
    select id from public.conversation_turns
    where facilitator_id = p_facilitator_id
      and coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
        = coalesce(p_learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      and archive_id is null
    order by id
    limit p_max_turns
  ) t;

  if moved_ids is null then
    return 0;
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

  return cardinality(moved_ids);
end
$$;

-- Auto-archive: while an update leaves more turns in the active segment than
-- the limit, the oldest segment of exactly that many turns is archived with
-- the current summary (which, posted two turns at a time, covers exactly that
-- segment). The active record keeps its rolling summary and recent turns and
-- counts only the turns left over.
create function public.conversation_updates_auto_archive() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  segment integer := public.archive_turn_limit();
  moved integer;
begin
  while new.turn_count > segment loop
    moved := public.archive_active_turns(new.facilitator_id, new.learner_id, new.summary, segment);
    exit when moved = 0;
    new.turn_count := new.turn_count - moved;
  end loop;
  return new;
end
$$;

create trigger auto_archive
before update of turn_count on public.conversation_updates
for each row
when (new.turn_count > public.archive_turn_limit())
execute function public.conversation_updates_auto_archive();

-- Clearing a conversation archives its active segment first, so history is
-- never lost. When the learner or the facilitator is being erased the rows
-- go with them, and there is nothing to keep.
create function public.conversation_updates_archive_on_delete() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
  perform public.archive_active_turns(old.facilitator_id, old.learner_id, old.summary, 2147483647);
  return old;
end
$$;

create trigger archive_on_delete
before delete on public.conversation_updates
for each row
execute function public.conversation_updates_archive_on_delete();

-- Keeps the active conversation's search vector equal to what the archive
-- would compute for it: summary at weight A, active turns at weight B.
create function public.conversation_updates_search_vector() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  new.search_vector :=
    setweight(to_tsvector('english', coalesce(new.summary, '')), 'A') ||
    setweight(coalesce((
      select to_tsvector('english', string_agg(t.content, ' ' order by t.id))
      from public.conversation_turns t
      where t.facilitator_id = new.facilitator_id
        and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
          = coalesce(new.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
        and t.archive_id is null
    ), ''::tsvector), 'B');
  return new;
end
$$;

-- Named to sort after auto_archive: triggers fire in name order, and the
-- vector must be computed from what is left active.
create trigger search_vector_refresh
before insert or update of summary, turn_count on public.conversation_updates
for each row
execute function public.conversation_updates_search_vector();

-- Collects the words of each new turn for misspelling correction.
create function public.conversation_turns_collect_words() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  insert into public.search_vocabulary (facilitator_id, word)
  select distinct n.facilitator_id, w.word
  from new_turns n
  cross join lateral unnest(tsvector_to_array(to_tsvector('simple', n.content))) as w(word)
  where char_length(w.word) between 4 and 40 and w.word ~ '^[[:alpha:]]+$'
  on conflict do nothing;
  return null;
end
$$;

create trigger collect_words
after insert on public.conversation_turns
referencing new table as new_turns
for each statement
execute function public.conversation_turns_collect_words();

-- Row-level security: a facilitator sees and changes only their own rows.
alter table public.learners enable row level security;
alter table public.conversation_updates enable row level security;
alter table public.conversation_turns enable row level security;
alter table public.conversation_history_archive enable row level security;
alter table public.search_vocabulary enable row level security;

create policy learners_select on public.learners for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy learners_insert on public.learners for insert to authenticated
  with check ((select auth.uid()) = facilitator_id);
create policy learners_update on public.learners for update to authenticated
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);
create policy learners_delete on public.learners for delete to authenticated
  using ((select auth.uid()) = facilitator_id);

create policy conversation_updates_select on public.conversation_updates for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy conversation_updates_insert on public.conversation_updates for insert to authenticated
  with check ((select auth.uid()) = facilitator_id);
create policy conversation_updates_update on public.conversation_updates for update to authenticated
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);
create policy conversation_updates_delete on public.conversation_updates for delete to authenticated
  using ((select auth.uid()) = facilitator_id);

-- The turn log and the archive are append-only for callers.
create policy conversation_turns_select on public.conversation_turns for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy conversation_turns_insert on public.conversation_turns for insert to authenticated
  with check ((select auth.uid()) = facilitator_id and archive_id is null);

create policy archive_select on public.conversation_history_archive for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy archive_insert on public.conversation_history_archive for insert to authenticated
  with check ((select auth.uid()) = facilitator_id);

create policy search_vocabulary_select on public.search_vocabulary for select to authenticated
  using ((select auth.uid()) = facilitator_id);

revoke update, delete, truncate on public.conversation_turns from anon, authenticated;
revoke update, delete, truncate on public.conversation_history_archive from anon, authenticated;
revoke insert, update, delete, truncate on public.search_vocabulary from anon, authenticated;

-- Trigger and helper functions are not part of the API.
revoke execute on function public.archive_active_turns(uuid, uuid, text, integer) from public, anon, authenticated;
revoke execute on function public.conversation_updates_auto_archive() from public, anon, authenticated;
revoke execute on function public.conversation_updates_archive_on_delete() from public, anon, authenticated;
revoke execute on function public.conversation_updates_search_vector() from public, anon, authenticated;
revoke execute on function public.conversation_turns_collect_words() from public, anon, authenticated;

insert into public.memory_migrations (version) values ('0002_conversation_memory');
