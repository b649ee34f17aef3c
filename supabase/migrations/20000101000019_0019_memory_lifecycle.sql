-- Migration 0019_memory_lifecycle of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0019_memory_lifecycle.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0019_memory_lifecycle') then
      raise exception 'migration 0019_memory_lifecycle was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000019; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Memories change over time, and every change is kept.
--
-- A memory is current until a newer one contradicts it (superseded), its
-- moment passes (expired) or a later breakthrough settles it (resolved);
-- then it leaves recall but stays listed, with what replaced it. Confidence
-- is stored as of the memory's last confirmation (last_seen_at: a repeat, or
-- a person confirming it) and read with its decay (memory_confidence_now).
alter table public.learner_memories
  add column status text not null default 'current'
    check (status in ('current', 'superseded', 'expired', 'resolved')),
  add column superseded_by uuid,
  -- A person should look at it: an automatic supersession, for one.
  add column needs_review boolean not null default false,
  add constraint learner_memories_superseded_by check ((status = 'superseded') = (superseded_by is not null));

-- Confidence as of now: 0.1 less for every full 30 days since the memory was
-- last confirmed, never below 0.3 (mentor.ConfidenceFloor). Computed when
-- read, so no job rewrites rows to age them.
create function public.memory_confidence_now(confidence real, last_confirmed timestamptz)
returns real
language sql stable
set search_path = ''
as $$
  select greatest(least(confidence, 0.3::real),
    confidence - 0.1 * floor(extract(epoch from (now() - last_confirmed)) / (30 * 86400)))::real
$$;

-- The history of every memory: append-only, one row per change, with who
-- made it and the text and confidence before and after. A row outlives its
-- memory (a forgotten memory keeps the record that it was forgotten, with
-- every text in its history blanked), and goes with its learner or user.
create table public.memory_history (
  id bigint generated always as identity,
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  memory_id uuid not null,
  learner_id uuid,
  change text not null
    check (change in ('created', 'merged', 'confirmed', 'corrected', 'superseded', 'expired', 'resolved', 'forgotten')),
  actor text not null check (actor in ('extraction', 'consolidation', 'facilitator', 'chat')),
  job_id bigint,
  session_id uuid,
  -- The other memory of a change: the one that superseded this one.
  related_memory_id uuid,
  content_before text check (char_length(content_before) <= 1000),
  content_after text check (char_length(content_after) <= 1000),
  confidence_before real check (confidence_before between 0 and 1),
  confidence_after real check (confidence_after between 0 and 1),
  status_after text check (status_after in ('current', 'superseded', 'expired', 'resolved')),
  created_at timestamptz not null default now(),
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

create index memory_history_of_memory on public.memory_history (facilitator_id, memory_id, id);

alter table public.memory_history enable row level security;

-- Users read their own history; only the service appends to it, and only
-- forgetting touches a row again, to blank its texts.
revoke all on public.memory_history from anon;
revoke insert, update, delete, truncate, trigger, references on public.memory_history from authenticated;
grant select on public.memory_history to authenticated;
grant insert on public.memory_history to memory_service;
grant update (content_before, content_after) on public.memory_history to memory_service;

create policy memory_history_select on public.memory_history for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy memory_history_insert on public.memory_history for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);
create policy memory_history_forget on public.memory_history for update to memory_service
  using ((select auth.uid()) = facilitator_id)
  with check ((select auth.uid()) = facilitator_id and content_before is null and content_after is null);
-- Its identity sequence is shared by every facilitator (migration 0013).
revoke all on sequence public.memory_history_id_seq from anon, authenticated;

insert into public.memory_migrations (version) values ('0019_memory_lifecycle');
