-- Migration 0020_consolidation of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0020_consolidation.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0020_consolidation') then
      raise exception 'migration 0020_consolidation was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000020; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Consolidation, the memory's "sleep": a job that keeps one learner's
-- memories true (merges repeats, supersedes contradicted facts, expires
-- passed moments and finished threads, resolves settled struggles). Each run
-- leaves a row in consolidation_runs, the audit trail a facilitator reads.

alter table public.memory_jobs drop constraint memory_jobs_kind_check;
alter table public.memory_jobs add constraint memory_jobs_kind_check
  check (kind in ('extract', 'end_session', 'consolidate'));

create table public.consolidation_runs (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid not null,
  job_id bigint,
  trigger text not null check (trigger in ('session_end', 'nightly', 'on_demand')),
  status text not null default 'queued' check (status in ('queued', 'running', 'done', 'failed')),
  -- What planned the changes: "offline" (rules) or the model's name.
  consolidator text check (char_length(consolidator) <= 100),
  started_at timestamptz,
  finished_at timestamptz,
  memories_in integer check (memories_in >= 0),
  memories_out integer check (memories_out >= 0),
  -- How many memories each kind of change touched: merged, superseded,
  -- expired, resolved.
  changes jsonb not null default '{}' check (jsonb_typeof(changes) = 'object'),
  model_tokens integer not null default 0 check (model_tokens >= 0),
  error text check (char_length(error) <= 500),
  created_at timestamptz not null default now(),
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

create index consolidation_runs_of_learner on public.consolidation_runs (facilitator_id, learner_id, created_at desc);
-- At most one run of a learner waits or runs at a time.
create unique index consolidation_runs_one_open on public.consolidation_runs (facilitator_id, learner_id)
  where status in ('queued', 'running');

alter table public.consolidation_runs enable row level security;

revoke all on public.consolidation_runs from anon;
revoke insert, update, delete, truncate, trigger, references on public.consolidation_runs from authenticated;
grant select on public.consolidation_runs to authenticated;
grant insert, update on public.consolidation_runs to memory_service;

create policy consolidation_runs_select on public.consolidation_runs for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy consolidation_runs_insert on public.consolidation_runs for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);
create policy consolidation_runs_update on public.consolidation_runs for update to memory_service
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);

-- The nightly run: every learner with a memory changed since their last run
-- ended (or never consolidated), and none in the last 20 hours, gets one, up to
-- batch at a time. It reads across facilitators, so it runs as its owner,
-- callable by the worker's role alone.
create function public.queue_nightly_consolidations(batch integer) returns integer
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
    limit batch
  ),
  jobs as (
    insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload)
    select facilitator_id, learner_id, 'consolidate', 'run:' || run_id, jsonb_build_object('run_id', run_id)
    from due
    returning facilitator_id, learner_id, id, (payload->>'run_id')::uuid as run_id
  )
  -- A run queued meanwhile for the same learner wins; the job left without
  -- its run is failed by the worker when claimed.
  insert into public.consolidation_runs (id, facilitator_id, learner_id, trigger, job_id)
  select run_id, facilitator_id, learner_id, 'nightly', id from jobs
  on conflict do nothing;
  get diagnostics queued = row_count;
  return queued;
end
$$;

revoke execute on function public.queue_nightly_consolidations(integer) from public, anon, authenticated;
grant execute on function public.queue_nightly_consolidations(integer) to memory_worker;

insert into public.memory_migrations (version) values ('0020_consolidation');
