-- Migration 0005_learner_memories of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0005_learner_memories.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0005_learner_memories') then
      raise exception 'migration 0005_learner_memories was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000005; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Learner memories: what the mentor knows about each learner, the live
-- sessions whose closing state is kept current, the precomputed opening of
-- the next session, and the background jobs that extract memories.

-- pgvector, where Supabase keeps it. A copy installed in another schema is
-- refused with instructions, because the service names the schema in its
-- queries.
do $$
declare
  vector_schema text;
begin
  select n.nspname into vector_schema
  from pg_extension e join pg_namespace n on n.oid = e.extnamespace
  where e.extname = 'vector';
  if vector_schema is null then
    create extension vector with schema extensions;
  elsif vector_schema <> 'extensions' then
    raise exception 'pgvector is installed in schema %, the service expects schema extensions: run alter extension vector set schema extensions', vector_schema;
  end if;
end
$$;

create table public.learner_memories (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  -- Null: a memory about the facilitator's situation in general.
  learner_id uuid,
  type text not null check (type in ('academic', 'personal', 'preference', 'context')),
  content text not null check (char_length(content) between 1 and 1000),
  importance real not null check (importance between 0 and 1),
  confidence real not null check (confidence between 0 and 1),
  metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
  source text not null check (source in ('extracted', 'added')),
  session_id uuid,
  source_turn_ids bigint[] not null default '{}',
  -- How often the same fact was learnt; repeats are merged into this row.
  mentions integer not null default 1 check (mentions >= 1),
  -- An embedding has no fixed dimension here: the model decides it, and
  -- vectors are only compared with those of the same model.
  embedding extensions.vector,
  embedding_model text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- When the fact was last learnt or confirmed; recency counts from here.
  last_seen_at timestamptz not null default now(),
  search_vector tsvector generated always as (to_tsvector('english', content)) stored,
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade,
  check ((embedding is null) = (embedding_model is null))
);

-- Recall reads one learner's memories (a few hundred at most) and ranks them
-- all, so the index only has to find them.
create index learner_memories_scope
  on public.learner_memories (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)), type, created_at desc);
create index learner_memories_content_trgm
  on public.learner_memories using gin (facilitator_id, content extensions.gin_trgm_ops);

-- A session is one sitting of a facilitator with the mentor about one learner
-- (or none). It starts with the first exchange and ends when the client says
-- so or after 30 idle minutes. While it is live, its closing state is kept
-- current after every exchange, so ending it answers at once.
create table public.mentor_sessions (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  started_at timestamptz not null default now(),
  last_activity_at timestamptz not null default now(),
  ended_at timestamptz,
  end_reason text check (end_reason in ('ended', 'idle')),
  exchanges integer not null default 0 check (exchanges >= 0),
  -- The latest exchange, to tell when the topic changes.
  last_message text not null default '',
  closing jsonb not null default '{}' check (jsonb_typeof(closing) = 'object'),
  primary key (facilitator_id, id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade,
  check ((ended_at is null) = (end_reason is null))
);

-- At most one live session per conversation.
create unique index mentor_sessions_one_live
  on public.mentor_sessions (facilitator_id, (coalesce(learner_id, '00000000-0000-0000-0000-000000000000'::uuid)))
  where ended_at is null;
create index mentor_sessions_idle on public.mentor_sessions (last_activity_at) where ended_at is null;

-- The opening of the next session, computed when a session ends, so the
-- first message of the next one needs no model call.
create table public.session_openings (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  session_id uuid not null,
  opening jsonb not null check (jsonb_typeof(opening) = 'object'),
  computed_at timestamptz not null default now(),
  constraint session_openings_one_per_learner unique nulls not distinct (facilitator_id, learner_id),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade,
  foreign key (facilitator_id, session_id)
    references public.mentor_sessions (facilitator_id, id) on delete cascade
);

-- Background work that must survive a restart. A job is enqueued in the
-- same transaction as the turns it is about, so accepted work is never lost;
-- (facilitator_id, kind, dedupe_key) is unique, so the same exchange is never
-- queued twice. Workers lease jobs with skip locked and retry with backoff.
create table public.memory_jobs (
  id bigint generated always as identity,
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  learner_id uuid,
  kind text not null check (kind in ('extract', 'end_session')),
  dedupe_key text not null,
  payload jsonb not null default '{}' check (jsonb_typeof(payload) = 'object'),
  status text not null default 'pending' check (status in ('pending', 'running', 'done', 'failed')),
  attempts integer not null default 0,
  run_after timestamptz not null default now(),
  lease_token uuid,
  leased_until timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (facilitator_id, id),
  unique (facilitator_id, kind, dedupe_key),
  foreign key (facilitator_id, learner_id)
    references public.learners (facilitator_id, id) on delete cascade
);

create index memory_jobs_due on public.memory_jobs (run_after) where status in ('pending', 'running');

alter table public.learner_memories enable row level security;
alter table public.mentor_sessions enable row level security;
alter table public.session_openings enable row level security;
alter table public.memory_jobs enable row level security;

create policy learner_memories_select on public.learner_memories for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy learner_memories_insert on public.learner_memories for insert to authenticated
  with check ((select auth.uid()) = facilitator_id);
create policy learner_memories_update on public.learner_memories for update to authenticated
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);
create policy learner_memories_delete on public.learner_memories for delete to authenticated
  using ((select auth.uid()) = facilitator_id);

create policy mentor_sessions_select on public.mentor_sessions for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy mentor_sessions_insert on public.mentor_sessions for insert to authenticated
  with check ((select auth.uid()) = facilitator_id);
create policy mentor_sessions_update on public.mentor_sessions for update to authenticated
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);

create policy session_openings_select on public.session_openings for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy session_openings_insert on public.session_openings for insert to authenticated
  with check ((select auth.uid()) = facilitator_id);
create policy session_openings_update on public.session_openings for update to authenticated
  using ((select auth.uid()) = facilitator_id) with check ((select auth.uid()) = facilitator_id);

-- Callers enqueue and watch their own jobs; only the service's workers,
-- connected as the owner, lease and finish them.
create policy memory_jobs_select on public.memory_jobs for select to authenticated
  using ((select auth.uid()) = facilitator_id);
create policy memory_jobs_insert on public.memory_jobs for insert to authenticated
  with check ((select auth.uid()) = facilitator_id and status = 'pending' and attempts = 0);

-- Sessions end rather than disappear; they go with their learner or user.
revoke delete, truncate on public.mentor_sessions from anon, authenticated;
revoke delete, truncate on public.session_openings from anon, authenticated;
revoke update, delete, truncate on public.memory_jobs from anon, authenticated;

-- A memory keeps its place if its session goes (it cannot, for callers, but
-- the owner may clean up).
alter table public.learner_memories add foreign key (facilitator_id, session_id)
  references public.mentor_sessions (facilitator_id, id) on delete set null (session_id);

insert into public.memory_migrations (version) values ('0005_learner_memories');
