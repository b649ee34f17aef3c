-- Migration 0013_service_role_writes_users_read of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0013_service_role_writes_users_read.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0013_service_role_writes_users_read') then
      raise exception 'migration 0013_service_role_writes_users_read was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000013; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- The database is the boundary, whoever asks. On Supabase every table in
-- public is reachable by any signed-in user through the Data API
-- (PostgREST), which runs their requests as role authenticated. Until now
-- the service ran its requests as authenticated too, so whatever the
-- service could write, a user could write past its validation: jobs that
-- bill the model, turns of any length, counters, forged archive rows.
--
-- The service now acts as memory_service, a role of its own: a member of
-- authenticated, so it inherits what authenticated may read and every
-- row-level policy written for authenticated applies to it as well, plus
-- the writes the service makes. PostgREST can only switch to roles its
-- authenticator is a member of (anon, authenticated, service_role), so no
-- token reaches memory_service. Role authenticated keeps reading a
-- facilitator's own rows, which the Next.js app may show, and writes
-- nothing: every change goes through the service's API and its limits.

do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'memory_service') then
    begin
      create role memory_service nologin inherit;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
end
$$;

grant authenticated to memory_service;

-- The service logs in as its own role and switches to memory_service for
-- each request's transaction.
do $$
begin
  if not pg_has_role(current_user, 'memory_service', 'member') then
    execute format('grant memory_service to %I', current_user);
  end if;
end
$$;

-- Users read their own rows and write none.
revoke insert, update, delete on
  public.learners, public.conversation_updates, public.conversation_turns,
  public.conversation_history_archive, public.search_vocabulary,
  public.learner_memories, public.mentor_sessions, public.session_openings,
  public.memory_jobs, public.memory_migrations
  from anon, authenticated;
-- Anonymous callers have no rows to read; the migrations' record is the
-- service's own.
revoke all on
  public.learners, public.conversation_updates, public.conversation_turns,
  public.conversation_history_archive, public.search_vocabulary,
  public.learner_memories, public.mentor_sessions, public.session_openings,
  public.memory_jobs
  from anon;
revoke all on public.memory_migrations from anon, authenticated;

-- The identity sequences of the turn log and the jobs: a user who could
-- advance one (setval, or UPDATE on it) could exhaust it for everyone.
-- Inserting a row takes its identity without any privilege on them.
revoke all on all sequences in schema public from anon, authenticated;

-- What the service writes, table by table. The archive and the search
-- vocabulary are written only by the security definer triggers; jobs are
-- leased and finished by the worker as the login role.
grant insert, update, delete on public.learners to memory_service;
grant insert, update, delete on public.conversation_updates to memory_service;
grant insert on public.conversation_turns to memory_service;
grant insert, update, delete on public.learner_memories to memory_service;
grant insert, update on public.mentor_sessions to memory_service;
grant insert, update on public.session_openings to memory_service;
grant insert on public.memory_jobs to memory_service;

-- The write policies now name the service's role; the read policies stay
-- with authenticated, which memory_service inherits. The archive is written
-- only by the archiving triggers, so its insert policy goes.
drop policy archive_insert on public.conversation_history_archive;
alter policy learners_insert on public.learners to memory_service;
alter policy learners_update on public.learners to memory_service;
alter policy learners_delete on public.learners to memory_service;
alter policy conversation_updates_insert on public.conversation_updates to memory_service;
alter policy conversation_updates_update on public.conversation_updates to memory_service;
alter policy conversation_updates_delete on public.conversation_updates to memory_service;
alter policy conversation_turns_insert on public.conversation_turns to memory_service;
alter policy learner_memories_insert on public.learner_memories to memory_service;
alter policy learner_memories_update on public.learner_memories to memory_service;
alter policy learner_memories_delete on public.learner_memories to memory_service;
alter policy mentor_sessions_insert on public.mentor_sessions to memory_service;
alter policy mentor_sessions_update on public.mentor_sessions to memory_service;
alter policy session_openings_insert on public.session_openings to memory_service;
alter policy session_openings_update on public.session_openings to memory_service;
alter policy memory_jobs_insert on public.memory_jobs to memory_service;

-- The same limits the API applies, kept by the database too, so a bug in
-- the service cannot store what a request could never send.
alter table public.conversation_turns
  add constraint conversation_turns_content_length check (char_length(content) between 1 and 20000);

-- A memory's metadata is a flat object of at most 16 keys, each lower-case
-- letters, digits and _ of at most 40 characters, each value a string of at
-- most 200 characters, a number or a boolean (mentor.ValidateMetadata).
create function public.memory_metadata_fits(metadata jsonb) returns boolean
language sql immutable
set search_path = ''
as $$
  select jsonb_typeof(metadata) = 'object'
    and (select count(*) from jsonb_object_keys(metadata)) <= 16
    and not exists (
      select 1 from jsonb_each(metadata) as e(key, value)
      where e.key !~ '^[a-z][a-z0-9_]{0,39}$'
        or jsonb_typeof(e.value) not in ('string', 'number', 'boolean')
        or (jsonb_typeof(e.value) = 'string' and char_length(e.value #>> '{}') > 200))
$$;

alter table public.learner_memories
  add constraint learner_memories_metadata_fits check (public.memory_metadata_fits(metadata)),
  -- A memory names the turns it was learnt from; a merge keeps the latest.
  add constraint learner_memories_source_turns check (cardinality(source_turn_ids) <= 100);

insert into public.memory_migrations (version) values ('0013_service_role_writes_users_read');
