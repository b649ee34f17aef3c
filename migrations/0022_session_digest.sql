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
