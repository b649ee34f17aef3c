-- Migration 0015_jobs_claimed_fairly of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0015_jobs_claimed_fairly.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0015_jobs_claimed_fairly') then
      raise exception 'migration 0015_jobs_claimed_fairly was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000015; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Jobs are claimed fairly across facilitators: one facilitator's thousand
-- queued extractions no longer hold back another's one. Each job gets a
-- place in a fair order, fair_at: now, or a second after the latest place
-- of the same facilitator's queued jobs, whichever is later. A facilitator
-- who queues a burst has it spread out in this order (not in time: every due
-- job still runs as soon as a worker is free), and anyone else's new job
-- sorts before the rest of the burst. Workers claim due jobs by fair_at.
alter table public.memory_jobs add column fair_at timestamptz not null default now();

create function public.memory_jobs_fair_place() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.fair_at := greatest(now(), coalesce((
    select max(j.fair_at) + interval '1 second' from public.memory_jobs j
    where j.facilitator_id = new.facilitator_id and j.status in ('pending', 'running')), now()));
  return new;
end
$$;

create trigger fair_place
before insert on public.memory_jobs
for each row
execute function public.memory_jobs_fair_place();

-- The latest place of a facilitator's queue, and the claim's order.
create index memory_jobs_queued_place on public.memory_jobs (facilitator_id, fair_at)
  where status in ('pending', 'running');
drop index public.memory_jobs_due;
create index memory_jobs_fair_due on public.memory_jobs (fair_at, id) where status in ('pending', 'running');

insert into public.memory_migrations (version) values ('0015_jobs_claimed_fairly');
