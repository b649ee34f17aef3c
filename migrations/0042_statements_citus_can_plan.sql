-- What Citus needs so that it can plan every statement: the worker's two
-- sweeps, the check whether learning is on and the quota's count are
-- rewritten, each doing what it did, and the service finishes the job it
-- leased as the role it learnt with.

-- The worker's two sweeps across facilitators, the nightly consolidations
-- (migrations 0020 and 0025) and retention (0025), find what is due in
-- one read of every facilitator's rows, then change each facilitator's
-- rows by statements that name the facilitator. On Citus, where each
-- facilitator's rows are on the shard of their own, the read runs on
-- every shard and each change on one; the sweeps as they were, one
-- statement each, were refused ("Subqueries in HAVING cannot refer to
-- outer query"; "could not run distributed query with FOR UPDATE/SHARE
-- commands"). They do what they did.

-- The nightly run: every learner with a memory changed since their last
-- run ended (or never consolidated), none in the last 20 hours, and
-- learning on, gets one, up to batch at a time. The learners due are found
-- by joins on the facilitator (the learning settings are read as
-- memory_learning_on reads them), and each gets its job and its run.
create or replace function public.queue_nightly_consolidations(batch integer) returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  due record;
  run_id uuid;
  new_job bigint;
  added integer;
  queued integer := 0;
begin
  for due in
    select m.facilitator_id, m.learner_id
    from (
      select facilitator_id, learner_id, max(updated_at) as changed
      from public.learner_memories
      where learner_id is not null
      group by facilitator_id, learner_id
    ) m
    left join (
      select facilitator_id, learner_id, max(coalesce(finished_at, created_at)) as last_run,
        bool_or(status in ('queued', 'running') or created_at > now() - interval '20 hours') as recent
      from public.consolidation_runs
      group by facilitator_id, learner_id
    ) r on r.facilitator_id = m.facilitator_id and r.learner_id = m.learner_id
    left join public.facilitator_settings fs on fs.facilitator_id = m.facilitator_id
    left join public.learner_settings ls on ls.facilitator_id = m.facilitator_id and ls.learner_id = m.learner_id
    where m.changed > coalesce(r.last_run, '-infinity')
      and not coalesce(r.recent, false)
      and coalesce(fs.learning, true) and coalesce(ls.learning, true)
    limit batch
  loop
    run_id := gen_random_uuid();
    insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload)
    values (due.facilitator_id, due.learner_id, 'consolidate', 'run:' || run_id, jsonb_build_object('run_id', run_id))
    returning id into new_job;
    -- A run queued meanwhile for the same learner wins; the job left
    -- without its run is failed by the worker when claimed.
    insert into public.consolidation_runs (id, facilitator_id, learner_id, trigger, job_id)
    values (run_id, due.facilitator_id, due.learner_id, 'nightly', new_job)
    on conflict do nothing;
    get diagnostics added = row_count;
    queued := queued + added;
  end loop;
  return queued;
end
$$;

revoke execute on function public.queue_nightly_consolidations(integer) from public, anon, authenticated;
grant execute on function public.queue_nightly_consolidations(integer) to memory_worker;

-- Retention: forgets up to batch memories that their account's
-- retention_days let go (confidence as of now below 0.5, not confirmed
-- within that many days), as a person's forget does. Each candidate is
-- locked by its key and checked again, and passed over when someone holds
-- it (a person confirming it, say), as before.
create or replace function public.forget_unconfirmed_memories(batch integer) returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  due record;
  gone integer;
  forgotten integer := 0;
begin
  for due in
    select m.facilitator_id, m.id, s.retention_days
    from public.learner_memories m
    join public.facilitator_settings s on s.facilitator_id = m.facilitator_id
    where s.retention_days is not null
      and m.last_seen_at < now() - make_interval(days => s.retention_days)
      and public.memory_confidence_now(m.confidence, m.last_seen_at) < 0.5
    limit batch
  loop
    perform 1 from public.learner_memories m
    where m.facilitator_id = due.facilitator_id and m.id = due.id
      and m.last_seen_at < now() - make_interval(days => due.retention_days)
      and public.memory_confidence_now(m.confidence, m.last_seen_at) < 0.5
    for update skip locked;
    continue when not found;

    with removed as (
      delete from public.learner_memories m
      where m.facilitator_id = due.facilitator_id and m.id = due.id
      returning m.facilitator_id, m.id, m.learner_id, m.session_id
    ),
    blanked as (
      update public.memory_history h set content_before = null, content_after = null
      where h.facilitator_id = due.facilitator_id and h.memory_id = due.id
        and (h.content_before is not null or h.content_after is not null)
    ),
    history as (
      insert into public.memory_history (facilitator_id, memory_id, learner_id, change, actor, session_id)
      select facilitator_id, id, learner_id, 'forgotten', 'retention', session_id from removed
    )
    select count(*) into gone from removed;
    forgotten := forgotten + gone;
  end loop;
  return forgotten;
end
$$;

revoke execute on function public.forget_unconfirmed_memories(integer) from public, anon, authenticated;
grant execute on function public.forget_unconfirmed_memories(integer) to memory_worker;

-- Whether learning is on (migration 0025), in PL/pgSQL: Citus cannot plan
-- a SQL function's statement on its tables with the function's arguments
-- in it ("could not create distributed plan ... parameters in SQL
-- functions"); a PL/pgSQL function's statements it can. (The SQL function
-- was not inlined either: a function with sub-selects never is.)
create or replace function public.memory_learning_on(facilitator uuid, learner uuid) returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  return coalesce((select s.learning from public.facilitator_settings s where s.facilitator_id = facilitator), true)
    and (learner is null or coalesce((select s.learning from public.learner_settings s
      where s.facilitator_id = facilitator and s.learner_id = learner), true));
end
$$;

revoke execute on function public.memory_learning_on(uuid, uuid) from public, anon;
grant execute on function public.memory_learning_on(uuid, uuid) to authenticated;

-- The quota's count (migration 0017) reads the time once, into a
-- variable: Citus refuses a function that is not immutable, now() among
-- them, in the DO UPDATE SET of an INSERT.
create or replace function public.use_quota(p_counter text, p_amount bigint, p_quota bigint)
returns void
language plpgsql security definer
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
  period text := split_part(p_counter, '/', 2);
  moment timestamptz := now();
  window_end timestamptz;
  used_now bigint;
begin
  if caller is null then
    raise exception 'use_quota counts for a signed-in user' using errcode = '42501';
  end if;
  if p_amount is null or p_amount < 0 then
    raise exception 'use_quota only adds usage' using errcode = '22023';
  end if;
  if period not in ('minute', 'day') then
    raise exception 'a counter''s name ends in /minute or /day, not %', p_counter using errcode = '22023';
  end if;
  window_end := case period
    when 'minute' then moment + interval '1 minute'
    else date_trunc('day', moment, 'UTC') + interval '1 day'
  end;

  insert into public.usage_counters as c (facilitator_id, counter, window_ends_at, used)
  values (caller, p_counter, window_end, p_amount)
  on conflict (facilitator_id, counter) do update
    set used = case when c.window_ends_at <= moment then excluded.used else c.used + excluded.used end,
      window_ends_at = case when c.window_ends_at <= moment then excluded.window_ends_at else c.window_ends_at end
  returning c.used, c.window_ends_at into used_now, window_end;

  if used_now > p_quota then
    raise exception using
      errcode = 'PT429',
      message = format('the %s quota of %s is used up', p_counter, p_quota),
      detail = greatest(1, ceil(extract(epoch from window_end - moment)))::text,
      constraint = p_counter;
  end if;
end
$$;

revoke execute on function public.use_quota(text, bigint, bigint) from public, anon, authenticated;
grant execute on function public.use_quota(text, bigint, bigint) to memory_service;

-- A job's work (memories learnt, a consolidation, closing words) and the
-- job's end are one transaction, run as memory_service for the job's
-- facilitator; the end was written as memory_worker, switching roles
-- midway (migration 0018). Citus reaches its workers as the role a
-- statement runs as, over a connection of its own, and refuses to touch a
-- facilitator's shards as one role once another changed them in the
-- transaction. So memory_service ends the job itself, within bounds: only
-- its caller's job, only one running under a lease (which the statement
-- names), and only to done, clearing the lease. Leasing, failing and
-- deferring jobs stay the worker's; the payload and everything else of a
-- job stay out of memory_service's reach.
grant update (status, finished_at, lease_token, last_error) on public.memory_jobs to memory_service;
create policy memory_jobs_finish on public.memory_jobs for update to memory_service
  using (facilitator_id = auth.uid() and status = 'running' and lease_token is not null)
  with check (facilitator_id = auth.uid() and status = 'done' and lease_token is null and finished_at is not null);

-- The service inserted a pending action naming only the columns it may
-- give (migration 0024); id, status and created_at kept their defaults.
-- Citus computes a row's defaults on the coordinator and sends the worker
-- the whole row, which a grant of some columns refuses. The grant is now of
-- the row, and the policy keeps what the columns did: an action is
-- inserted pending, undecided, and dated now (give or take a minute, the
-- clocks of a coordinator and its workers differing by less).
grant insert on public.pending_actions to memory_service;
alter policy pending_actions_insert on public.pending_actions
  with check (facilitator_id = auth.uid() and status = 'pending' and decided_at is null
    and created_at between now() - interval '1 minute' and now() + interval '1 minute');
