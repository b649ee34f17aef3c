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
