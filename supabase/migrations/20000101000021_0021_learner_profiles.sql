-- Migration 0021_learner_profiles of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0021_learner_profiles.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0021_learner_profiles') then
      raise exception 'migration 0021_learner_profiles was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000021; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- One profile per learner: what the mentor believes about the learner as a
-- whole, rebuilt by each consolidation run from the current memories, in
-- lines that name the memories they stand on (mentor.BuildProfile). The
-- lines a facilitator wrote are kept apart and always carried over.
create table public.learner_profiles (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid not null,
  -- Every line as shown: [{category, text, memory_ids, by_facilitator}].
  lines jsonb not null default '[]' check (jsonb_typeof(lines) = 'array'),
  -- The facilitator's own lines: [{category, text}].
  own_lines jsonb not null default '[]' check (jsonb_typeof(own_lines) = 'array' and jsonb_array_length(own_lines) <= 20),
  tokens integer not null default 0 check (tokens between 0 and 2000),
  -- What the last build left out for the budget: [{memory_ids, text, reason}].
  dropped jsonb not null default '[]' check (jsonb_typeof(dropped) = 'array'),
  updated_at timestamptz not null default now(),
  primary key (facilitator_id, learner_id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

alter table public.learner_profiles enable row level security;

revoke all on public.learner_profiles from anon;
revoke insert, update, delete, truncate, trigger, references on public.learner_profiles from authenticated;
grant select on public.learner_profiles to authenticated;
grant insert, update on public.learner_profiles to memory_service;

create policy learner_profiles_select on public.learner_profiles for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy learner_profiles_insert on public.learner_profiles for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);
create policy learner_profiles_update on public.learner_profiles for update to memory_service
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);

-- The audit trail says how the profile's size moved.
alter table public.consolidation_runs
  add column profile_tokens_before integer check (profile_tokens_before >= 0),
  add column profile_tokens_after integer check (profile_tokens_after >= 0);

-- Confidence never rises with time: a last confirmation stamped ahead of
-- the database's clock (another host's) counts as now.
create or replace function public.memory_confidence_now(confidence real, last_confirmed timestamptz)
returns real
language sql stable
set search_path = ''
as $$
  select greatest(least(confidence, 0.3::real),
    confidence - 0.1 * floor(greatest(0, extract(epoch from (now() - last_confirmed))) / (30 * 86400)))::real
$$;

insert into public.memory_migrations (version) values ('0021_learner_profiles');
