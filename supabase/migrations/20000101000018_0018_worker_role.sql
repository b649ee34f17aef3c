-- Migration 0018_worker_role of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0018_worker_role.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0018_worker_role') then
      raise exception 'migration 0018_worker_role was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000018; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- The worker's own statements (leasing a job, failing or deferring it,
-- finishing it, listing idle sessions) ran as the login role, the owner
-- and on the embedded cluster a superuser. Any trigger on the jobs table
-- then ran with every right in the database. They now run as
-- memory_worker: no superuser, no owner, no bypass of row-level security,
-- and nothing but the job queue's bookkeeping and the sessions' idle
-- times. The work a job does for a facilitator already runs as that
-- facilitator, as memory_service (migration 0013).

do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'memory_worker') then
    begin
      create role memory_worker nologin nosuperuser nobypassrls;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
end
$$;

-- The service logs in as its own role and switches to memory_worker for
-- the queue's statements.
do $$
begin
  if not pg_has_role(current_user, 'memory_worker', 'member') then
    execute format('grant memory_worker to %I', current_user);
  end if;
end
$$;

grant usage on schema public to memory_worker;

-- Across facilitators, the queue's columns only: never a job's payload
-- changed, never one inserted or deleted.
grant select on public.memory_jobs to memory_worker;
grant update (status, attempts, run_after, lease_token, leased_until, last_error, finished_at)
  on public.memory_jobs to memory_worker;
create policy memory_jobs_worker_select on public.memory_jobs for select to memory_worker
  using (true);
create policy memory_jobs_worker_update on public.memory_jobs for update to memory_worker
  using (true) with check (true);

-- Which sessions have gone idle, and whose: nothing of what was said.
grant select (facilitator_id, learner_id, ended_at, last_activity_at)
  on public.mentor_sessions to memory_worker;
create policy mentor_sessions_worker_select on public.mentor_sessions for select to memory_worker
  using (true);

insert into public.memory_migrations (version) values ('0018_worker_role');
