-- A posted turn may carry the time it was said (a client importing history
-- sends it), so an archived conversation can be much older than the day it
-- was archived. Search prefers the conversations of a time a question
-- names, so each archived conversation records the span of time its turns
-- cover: the earliest and the latest of their times (by time, not by place
-- in the log, as history may be imported after later turns). A trigger
-- derives the span from the archived turns themselves, whoever writes the
-- row (the archiving function, an import, a migration), so the two always
-- agree; a row whose turns carry no time covers the moment it was archived.

alter table public.conversation_history_archive
  add column first_turn_at timestamptz,
  add column last_turn_at timestamptz;

create function public.archive_time_span() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  select coalesce(min(t.at), new.archived_at), coalesce(max(t.at), new.archived_at)
    into new.first_turn_at, new.last_turn_at
  from (
    select (e ->> 'created_at')::timestamptz as at
    from jsonb_array_elements(new.conversation_turns) e
  ) t;
  return new;
end
$$;

revoke execute on function public.archive_time_span() from public, anon, authenticated;

create trigger time_span
before insert or update on public.conversation_history_archive
for each row
execute function public.archive_time_span();

-- The rows archived so far: the trigger computes their span.
update public.conversation_history_archive set first_turn_at = null;

alter table public.conversation_history_archive
  alter column first_turn_at set not null,
  alter column last_turn_at set not null,
  add constraint archive_time_span_in_order check (first_turn_at <= last_turn_at);
