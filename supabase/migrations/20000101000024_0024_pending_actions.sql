-- Migration 0024_pending_actions of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0024_pending_actions.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0024_pending_actions') then
      raise exception 'migration 0024_pending_actions was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000024; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- What the mentor proposes to change in the memory from the chat, waiting
-- for the facilitator's click. The model never forgets or rewrites a
-- memory itself: text inside a turn or a memory can carry instructions, so
-- a forget or a correction it asks for is stored here as pending, and only
-- the facilitator's confirmation applies it, once, before it expires.
--
-- A row names the memories it would change and the version of each it was
-- proposed on (updated_at), never their text: a memory forgotten meanwhile
-- leaves no copy of itself here, and a memory changed meanwhile is not
-- changed by a confirmation of what the facilitator saw before.
create table public.pending_actions (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  kind text not null check (kind in ('forget_memory', 'forget_topic', 'correct_memory')),
  -- The words a topic was forgotten by, as the model gave them.
  topic text check (char_length(topic) between 1 and 500),
  -- [{memory_id, version, content_after}]: content_after only for a
  -- correction still pending (mentor.MaxActionMemories at most).
  changes jsonb not null
    check (jsonb_typeof(changes) = 'array' and jsonb_array_length(changes) between 1 and 50),
  status text not null default 'pending' check (status in ('pending', 'confirmed', 'cancelled', 'expired')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  decided_at timestamptz,
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade,
  constraint pending_actions_expiry check (expires_at > created_at and expires_at <= created_at + interval '1 hour'),
  constraint pending_actions_decided check ((status = 'pending') = (decided_at is null)),
  constraint pending_actions_topic check ((kind = 'forget_topic') = (topic is not null))
);

create index pending_actions_newest on public.pending_actions (facilitator_id, status, created_at desc);

alter table public.pending_actions enable row level security;

-- Users read their own actions and decide none through the Data API: a
-- confirmation goes through the service, which applies it in the same
-- transaction. The service inserts only pending actions (created_at and
-- status keep their defaults), and changes an action once: from pending to
-- decided, never back, and to confirmed only before it expires.
revoke all on public.pending_actions from anon;
revoke insert, update, delete, truncate, trigger, references on public.pending_actions from authenticated;
grant select on public.pending_actions to authenticated;
grant insert (facilitator_id, learner_id, kind, topic, changes, expires_at) on public.pending_actions to memory_service;
grant update (status, decided_at, changes) on public.pending_actions to memory_service;

create policy pending_actions_select on public.pending_actions for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy pending_actions_insert on public.pending_actions for insert to memory_service
  with check ((select auth.uid()) = facilitator_id and status = 'pending' and decided_at is null);
create policy pending_actions_decide on public.pending_actions for update to memory_service
  using ((select auth.uid()) = facilitator_id and status = 'pending')
  with check ((select auth.uid()) = facilitator_id and status <> 'pending'
    and (status <> 'confirmed' or expires_at > now()));

-- A facilitator flagging a memory from the chat as not quite right is a
-- change of its own in the memory's history; chat is the actor of every
-- change made from the chat (migration 0019 reserved it).
alter table public.memory_history drop constraint memory_history_change_check,
  add constraint memory_history_change_check check (change in ('created', 'merged', 'confirmed', 'corrected',
    'superseded', 'expired', 'resolved', 'forgotten', 'flagged'));

insert into public.memory_migrations (version) values ('0024_pending_actions');
