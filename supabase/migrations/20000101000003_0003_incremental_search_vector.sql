-- Migration 0003_incremental_search_vector of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0003_incremental_search_vector.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0003_incremental_search_vector') then
      raise exception 'migration 0003_incremental_search_vector was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000003; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- The active conversation's search vector was rebuilt from every active turn
-- by a trigger that fired several times per update. Now the turns' part is
-- kept in turns_vector, which an update extends with only the new turns'
-- vector, and search_vector is generated from it and the summary. Only
-- archiving, which removes turns from the active segment, rebuilds
-- turns_vector.

drop trigger search_vector_refresh on public.conversation_updates;
drop function public.conversation_updates_search_vector();

alter table public.conversation_updates
  add column turns_vector tsvector not null default ''::tsvector;

update public.conversation_updates c
set turns_vector = coalesce((
  select to_tsvector('english', string_agg(t.content, ' ' order by t.id))
  from public.conversation_turns t
  where t.facilitator_id = c.facilitator_id
    and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      = coalesce(c.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
    and t.archive_id is null
), ''::tsvector);

drop index public.conversation_updates_search;
alter table public.conversation_updates drop column search_vector;
alter table public.conversation_updates
  add column search_vector tsvector generated always as (
    setweight(to_tsvector('english', coalesce(summary, '')), 'A') ||
    setweight(turns_vector, 'B')
  ) stored;
create index conversation_updates_search
  on public.conversation_updates using gin (facilitator_id, search_vector);

-- No query orders active conversations by recency; the index only slowed
-- every update.
drop index public.conversation_updates_owner_recent;

-- Auto-archive, as before, and then the turns left active are all that
-- turns_vector holds.
create or replace function public.conversation_updates_auto_archive() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  segment integer := public.archive_turn_limit();
  moved integer;
begin
  while new.turn_count > segment loop
    moved := public.archive_active_turns(new.facilitator_id, new.learner_id, new.summary, segment);
    exit when moved = 0;
    new.turn_count := new.turn_count - moved;
  end loop;
  new.turns_vector := coalesce((
    select to_tsvector('english', string_agg(t.content, ' ' order by t.id))
    from public.conversation_turns t
    where t.facilitator_id = new.facilitator_id
      and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
        = coalesce(new.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      and t.archive_id is null
  ), ''::tsvector);
  return new;
end
$$;

insert into public.memory_migrations (version) values ('0003_incremental_search_vector');
