-- Migration 0022_session_digest of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0022_session_digest.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0022_session_digest') then
      raise exception 'migration 0022_session_digest was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000022; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Each session's own summary, written when it ends (mentor.SummarizeSession)
-- and again when memories learnt from its last exchange arrive after.
alter table public.mentor_sessions
  add column summary text check (char_length(summary) <= 1200);

-- What the last few sessions add up to (mentor.SessionDigest), kept by each
-- consolidation run beside the profile: recurring themes, where things
-- stand, a line per session.
alter table public.learner_profiles
  add column digest jsonb not null default '{}' check (jsonb_typeof(digest) = 'object'),
  add column digest_tokens integer not null default 0 check (digest_tokens between 0 and 800);

-- A consolidation reads the learner's latest ended sessions.
create index mentor_sessions_ended_by_learner
  on public.mentor_sessions (facilitator_id, learner_id, ended_at desc)
  where ended_at is not null;

insert into public.memory_migrations (version) values ('0022_session_digest');
