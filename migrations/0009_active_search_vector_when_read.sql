-- The active conversation's search vector was a stored generated column, so
-- every post recomputed it, parsing the whole summary again and reweighting
-- a copy of the turns' vector, and wrote it to the TOAST table beside
-- turns_vector, which holds the same words. Only search reads it, and only
-- for a facilitator's few active conversations, so it is now computed there:
-- search_vector(c) is a function of the row, which Postgres also accepts
-- written as a column, c.search_vector, and inlines into the query.
alter table public.conversation_updates drop column search_vector;

create function public.search_vector(c public.conversation_updates) returns tsvector
language sql immutable parallel safe
as $$
  select setweight(to_tsvector('english', coalesce(c.summary, '')), 'A') ||
    setweight(c.turns_vector, 'B')
$$;
