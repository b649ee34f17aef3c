-- The active conversation's search vector is computed from its summary
-- and its turns' vector (migration 0009) by a function of those two
-- columns, which search calls. search_vector(c), a function of the
-- table's row, stays, now computed by it, so the two cannot differ.
--
-- On Citus search runs on the worker that holds the facilitator's shard,
-- where a row is the shard's, not public.conversation_updates: a function
-- of the table's row cannot be created or called there, a function of
-- two columns can. (Neither sets a search_path: Postgres inlines a SQL
-- function into the query only without one.)
create function public.conversation_search_vector(summary text, turns_vector tsvector) returns tsvector
language sql immutable parallel safe
as $$
  select setweight(to_tsvector('english', coalesce(summary, '')), 'A') || setweight(turns_vector, 'B')
$$;

create or replace function public.search_vector(c public.conversation_updates) returns tsvector
language sql immutable parallel safe
as $$
  select public.conversation_search_vector(c.summary, c.turns_vector)
$$;
