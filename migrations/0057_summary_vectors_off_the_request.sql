-- An active conversation's summary is parsed once for each version of it,
-- off the request, instead of on every search. Search computed each
-- active conversation's vector from its summary and turns (migrations 0009
-- and 0041): parsing a 1.5 kB summary costs about 0.7 ms, paid for every
-- active conversation of the facilitator on every search (30 of them for a
-- teacher with a class of 30: most of such a search's time).
--
-- summary_vector holds the summary's words as search weighs them, or null
-- while the summary has changed since it was parsed: search then parses
-- the summary itself, as before, so it never reads words older than the
-- summary. A trigger clears it whenever the summary changes, whoever
-- writes it (a post, the summarizer, an import), and lists the
-- conversation in private.summary_vectors_due; the background worker
-- parses the listed summaries once they have stood unchanged a while
-- (postgres.Store.RefreshSummaryVectors), so that a conversation posted to
-- after every reply is parsed when its exchange pauses, not after every
-- post.

-- The summary's words at weight A: the one definition, for search, the
-- worker and the rows below.
create function public.summary_search_vector(summary text) returns tsvector
language sql immutable parallel safe
as $$
  select setweight(to_tsvector('english', coalesce(summary, '')), 'A')
$$;

alter table public.conversation_updates add column summary_vector tsvector;

update public.conversation_updates set summary_vector = public.summary_search_vector(summary);

-- The active conversation's vector, from its summary's stored words when
-- they are current; it replaces migration 0041's function of the summary
-- and the turns. (No search_path, so that Postgres inlines it, as 0041
-- says.)
create function public.conversation_search_vector(summary text, summary_vector tsvector, turns_vector tsvector)
returns tsvector
language sql immutable parallel safe
as $$
  select coalesce(summary_vector, public.summary_search_vector(summary)) || setweight(turns_vector, 'B')
$$;

create or replace function public.search_vector(c public.conversation_updates) returns tsvector
language sql immutable parallel safe
as $$
  select public.conversation_search_vector(c.summary, c.summary_vector, c.turns_vector)
$$;

drop function public.conversation_search_vector(text, tsvector);

-- The conversations whose summary changed since it was parsed, and since
-- when. A conversation's row goes with it (a clear, an erasure).
create table private.summary_vectors_due (
  facilitator_id uuid not null,
  conversation_id uuid not null,
  listed_at timestamptz not null default now(),
  primary key (facilitator_id, conversation_id),
  foreign key (facilitator_id, conversation_id)
    references public.conversation_updates (facilitator_id, id) on delete cascade
);
alter table private.summary_vectors_due enable row level security;

-- A changed summary's stored words are dropped in the row the change
-- writes (a post names the summary in every update, changed or not).
create function public.summary_vector_stale() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.summary_vector := null;
  return new;
end
$$;

create trigger summary_vector_stale
before update of summary on public.conversation_updates
for each row
when (old.summary is distinct from new.summary)
execute function public.summary_vector_stale();

-- Then the conversation is listed, once until the worker parses it: a
-- statement naming its facilitator, which Citus runs beside the row.
create function public.summary_vector_due() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  insert into private.summary_vectors_due (facilitator_id, conversation_id)
  values (new.facilitator_id, new.id)
  on conflict do nothing;
  return null;
end
$$;

create trigger summary_vector_due
after insert or update of summary on public.conversation_updates
for each row
when (new.summary_vector is null and new.summary <> '')
execute function public.summary_vector_due();

revoke execute on function public.summary_vector_stale() from public, anon, authenticated;
revoke execute on function public.summary_vector_due() from public, anon, authenticated;

-- The worker finds the settled conversations across facilitators, as it
-- finds due jobs (migration 0018): which ones and whose, nothing of what
-- was said. Parsing a facilitator's runs as that facilitator
-- (memory_service), which takes them off the list.
grant usage on schema private to memory_worker;
grant select on private.summary_vectors_due to memory_worker;
create policy summary_vectors_due_worker_select on private.summary_vectors_due for select to memory_worker
  using (true);
grant select, delete on private.summary_vectors_due to memory_service;
create policy summary_vectors_due_service on private.summary_vectors_due for all to memory_service
  using (facilitator_id = auth.uid());
