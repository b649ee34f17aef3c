-- Migration 0025_facilitator_control of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0025_facilitator_control.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0025_facilitator_control') then
      raise exception 'migration 0025_facilitator_control was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000025; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- The facilitator controls what is learnt and kept: learning can be turned
-- off for one learner or the whole account (no extraction, no
-- consolidation, no profile rebuild; conversation memory keeps working), and
-- the account may keep low-confidence memories only for a number of days.
-- A clear now also starts the next session's opening afresh, so the service
-- deletes openings; retention forgets memories, recorded as such.

create table public.facilitator_settings (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  -- False: nothing is learnt from any conversation of the account.
  learning boolean not null default true,
  -- Null: memories are kept until forgotten. Otherwise a memory whose
  -- confidence as of now is below 0.5 and that nobody confirmed for this
  -- many days is forgotten by the worker's sweep.
  retention_days integer check (retention_days between 1 and 3650),
  updated_at timestamptz not null default now(),
  primary key (facilitator_id)
);

create table public.learner_settings (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid not null,
  -- False: nothing is learnt about this learner.
  learning boolean not null default true,
  updated_at timestamptz not null default now(),
  primary key (facilitator_id, learner_id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

alter table public.facilitator_settings enable row level security;
alter table public.learner_settings enable row level security;

-- Users read their own settings and write none: the service's API is the
-- only writer, as for every other table (migration 0013). A setting written
-- past it (through the Data API) would change what the service learns
-- without its checks, so the Data API may not write them at all.
revoke all on public.facilitator_settings, public.learner_settings from anon;
revoke insert, update, delete, truncate, trigger, references
  on public.facilitator_settings, public.learner_settings from authenticated;
grant select on public.facilitator_settings, public.learner_settings to authenticated;
grant insert, update on public.facilitator_settings, public.learner_settings to memory_service;

create policy facilitator_settings_select on public.facilitator_settings for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy facilitator_settings_insert on public.facilitator_settings for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);
create policy facilitator_settings_update on public.facilitator_settings for update to memory_service
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);

create policy learner_settings_select on public.learner_settings for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy learner_settings_insert on public.learner_settings for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);
create policy learner_settings_update on public.learner_settings for update to memory_service
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);

-- Whether the mentor learns from the facilitator's conversation about the
-- learner (null: the general conversation): on unless the account or the
-- learner turned it off. It runs as its caller, so under RLS a caller only
-- ever reads their own settings.
create function public.memory_learning_on(facilitator uuid, learner uuid) returns boolean
language sql stable
set search_path = ''
as $$
  select coalesce((select s.learning from public.facilitator_settings s where s.facilitator_id = facilitator), true)
    and (learner is null or coalesce((select s.learning from public.learner_settings s
      where s.facilitator_id = facilitator and s.learner_id = learner), true))
$$;

revoke execute on function public.memory_learning_on(uuid, uuid) from public, anon;
grant execute on function public.memory_learning_on(uuid, uuid) to authenticated;

-- The nightly runs skip learners whose learning is off: the same function
-- as 0020 with that one condition more.
create or replace function public.queue_nightly_consolidations(batch integer) returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  queued integer;
begin
  with due as (
    select m.facilitator_id, m.learner_id, gen_random_uuid() as run_id
    from public.learner_memories m
    where m.learner_id is not null
    group by m.facilitator_id, m.learner_id
    having max(m.updated_at) > coalesce((
        select max(coalesce(r.finished_at, r.created_at)) from public.consolidation_runs r
        where r.facilitator_id = m.facilitator_id and r.learner_id = m.learner_id), '-infinity')
      and not exists (
        select 1 from public.consolidation_runs r
        where r.facilitator_id = m.facilitator_id and r.learner_id = m.learner_id
          and (r.status in ('queued', 'running') or r.created_at > now() - interval '20 hours'))
      and public.memory_learning_on(m.facilitator_id, m.learner_id)
    limit batch
  ),
  jobs as (
    insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload)
    select facilitator_id, learner_id, 'consolidate', 'run:' || run_id, jsonb_build_object('run_id', run_id)
    from due
    returning facilitator_id, learner_id, id, (payload->>'run_id')::uuid as run_id
  )
  insert into public.consolidation_runs (id, facilitator_id, learner_id, trigger, job_id)
  select run_id, facilitator_id, learner_id, 'nightly', id from jobs
  on conflict do nothing;
  get diagnostics queued = row_count;
  return queued;
end
$$;

revoke execute on function public.queue_nightly_consolidations(integer) from public, anon, authenticated;
grant execute on function public.queue_nightly_consolidations(integer) to memory_worker;

-- A memory forgotten by the retention sweep says so in its history.
alter table public.memory_history drop constraint memory_history_actor_check;
alter table public.memory_history add constraint memory_history_actor_check
  check (actor in ('extraction', 'consolidation', 'facilitator', 'chat', 'retention'));

-- Retention: forgets, across facilitators, up to batch memories that their
-- account's retention_days let go: confidence as of now below 0.5 (an
-- extracted memory unconfirmed for three months, a superseded one) and not
-- confirmed (last_seen_at) within that many days. Like a person's forget,
-- the memory goes, every text in its history is blanked, and the history
-- records, without a word of it, that retention forgot it. It reads across
-- facilitators, so it runs as its owner, callable by the worker's role
-- alone. It returns how many it forgot.
create function public.forget_unconfirmed_memories(batch integer) returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  forgotten integer;
begin
  with due as (
    select m.facilitator_id, m.id
    from public.learner_memories m
    join public.facilitator_settings s on s.facilitator_id = m.facilitator_id
    where s.retention_days is not null
      and m.last_seen_at < now() - make_interval(days => s.retention_days)
      and public.memory_confidence_now(m.confidence, m.last_seen_at) < 0.5
    limit batch
    for update of m skip locked
  ),
  gone as (
    delete from public.learner_memories m using due
    where m.facilitator_id = due.facilitator_id and m.id = due.id
    returning m.facilitator_id, m.id, m.learner_id, m.session_id
  ),
  blanked as (
    update public.memory_history h set content_before = null, content_after = null
    from gone g
    where h.facilitator_id = g.facilitator_id and h.memory_id = g.id
      and (h.content_before is not null or h.content_after is not null)
  ),
  history as (
    insert into public.memory_history (facilitator_id, memory_id, learner_id, change, actor, session_id)
    select facilitator_id, id, learner_id, 'forgotten', 'retention', session_id from gone
  )
  select count(*) into forgotten from gone;
  return forgotten;
end
$$;

revoke execute on function public.forget_unconfirmed_memories(integer) from public, anon, authenticated;
grant execute on function public.forget_unconfirmed_memories(integer) to memory_worker;

-- Clearing a conversation removes the opening it would have led to.
grant delete on public.session_openings to memory_service;
create policy session_openings_delete on public.session_openings for delete to memory_service
  using ((select auth.uid()) = facilitator_id);

insert into public.memory_migrations (version) values ('0025_facilitator_control');
