-- A post extended the active conversation's search words (turns_vector)
-- by parsing its turns' text again, though the insert just before had
-- parsed each turn into its own vector (content_vector, the same english
-- configuration). The post now concatenates those stored vectors instead:
-- the same words, counted the same; only their positions may differ by a
-- place where one turn ends, and search's ranking reads a term's
-- occurrences and a vector's length, never positions. Parsing was about a
-- twentieth of a post's time in Postgres.
create aggregate public.tsvector_agg(tsvector) (
  sfunc = pg_catalog.tsvector_concat,
  stype = tsvector,
  initcond = ''
);

revoke execute on function public.tsvector_agg(tsvector) from public, anon, authenticated;
grant execute on function public.tsvector_agg(tsvector) to memory_service;
