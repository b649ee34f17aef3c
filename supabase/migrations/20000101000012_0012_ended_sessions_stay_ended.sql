-- Migration 0012_ended_sessions_stay_ended of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0012_ended_sessions_stay_ended.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0012_ended_sessions_stay_ended') then
      raise exception 'migration 0012_ended_sessions_stay_ended was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000012; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- An ended session stays ended. Its closing state may still grow (memories
-- learnt from its last exchange arrive after it ended), but when and why it
-- ended are settled: a user writing through Supabase's Data API cannot
-- revive it, which would leave two live sessions' worth of state behind one
-- conversation and the next opening built from the wrong one.
create function public.mentor_sessions_stay_ended() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.ended_at is distinct from old.ended_at or new.end_reason is distinct from old.end_reason then
    raise exception 'an ended session stays ended' using errcode = 'check_violation';
  end if;
  return new;
end;
$$;

create trigger stay_ended
  before update on public.mentor_sessions
  for each row
  when (old.ended_at is not null)
  execute function public.mentor_sessions_stay_ended();

insert into public.memory_migrations (version) values ('0012_ended_sessions_stay_ended');
