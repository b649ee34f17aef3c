-- Migration 0009_active_search_vector_when_read of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0009_active_search_vector_when_read.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0009_active_search_vector_when_read') then
      raise exception 'migration 0009_active_search_vector_when_read was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000009; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

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

insert into public.memory_migrations (version) values ('0009_active_search_vector_when_read');
