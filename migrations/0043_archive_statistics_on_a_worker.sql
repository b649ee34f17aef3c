-- Search's statistics of each facilitator's archive (migration 0031), kept
-- by statements that Citus can run on the worker holding the facilitator's
-- shards. They count what they counted, when they counted it.
--
-- On Citus the archive's triggers run on that worker, on the shard of the
-- archive that changed, and their statements run there as queries of the
-- distributed tables: each must name one facilitator, so that it reaches
-- the shards beside it and no other (Citus refuses a trigger's query that
-- reaches another node: "cannot execute a distributed query from a query
-- on a shard"), and none may take a transition table's rows into a
-- statement on a distributed table (the worker plans such a statement
-- apart from the trigger, where the transition table is unknown: "could
-- not find named tuplestore"). So:
--   - an archived conversation enters the list of those to count by a
--     trigger for each row, which names its facilitator;
--   - the count at commit takes the facilitator's list into an array,
--     then counts the conversations of the array, a statement each;
--   - removals and rewrites gather their terms from the transition tables
--     alone, a list per facilitator, then change the facilitator's rows,
--     each statement naming the facilitator;
-- and the list is distributed beside the archive (`server migrate
-- --citus` distributes the tables of private with a facilitator_id too).
-- The archive emptied at once (TRUNCATE) runs its trigger on the
-- coordinator, which may reach every shard, and stays as it was.

-- The policy compares facilitator_id with auth.uid() without a sub-select,
-- as every other does (migration 0039, which a database migrated before
-- migration 0031 was written applied first).
alter policy archive_term_stats_select on public.archive_term_stats
  using (facilitator_id = auth.uid());

drop trigger term_stats_add on public.conversation_history_archive;

create or replace function public.archive_term_stats_add() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  insert into private.archive_terms_to_count (facilitator_id, archive_id)
  values (new.facilitator_id, new.id);
  return null;
end
$$;

create trigger term_stats_add
after insert on public.conversation_history_archive
for each row execute function public.archive_term_stats_add();

-- At commit, the first of the transaction's additions for a facilitator
-- counts all of theirs, in the order of the key, as before; the list's
-- rows are taken by one statement and the conversations they name counted
-- by the next.
create or replace function public.archive_term_stats_count() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  taken uuid[];
begin
  if not exists (select from private.archive_terms_to_count c
      where c.facilitator_id = new.facilitator_id and c.archive_id = new.archive_id) then
    return null;
  end if;
  with removed as (
    delete from private.archive_terms_to_count c where c.facilitator_id = new.facilitator_id
    returning c.archive_id
  )
  select array_agg(r.archive_id) into taken from removed r;

  insert into public.archive_term_stats as s (facilitator_id, term, conversations, lexemes)
  select a.facilitator_id, t.term, count(*), sum(a.lexemes)
  from (
    select a.facilitator_id, length(a.search_vector) as lexemes, tsvector_to_array(a.search_vector) as terms
    from public.conversation_history_archive a
    where a.facilitator_id = new.facilitator_id and a.id = any(taken)
    offset 0
  ) a
  cross join lateral unnest(array_prepend('', a.terms)) as t(term)
  group by a.facilitator_id, t.term
  order by a.facilitator_id, t.term
  on conflict (facilitator_id, term) do update
    set conversations = s.conversations + excluded.conversations, lexemes = s.lexemes + excluded.lexemes;
  return null;
end
$$;

-- Archived conversations removed: for each facilitator, those added in
-- the same transaction leave the list uncounted; the others' terms are
-- counted out, a term no conversation holds any more losing its row; and
-- a facilitator whose archive went whole loses all their rows at once.
create or replace function public.archive_term_stats_remove() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  facilitator uuid;
  ids uuid[];
  uncounted uuid[];
  term_list text[];
  term_conversations integer[];
  term_lexemes bigint[];
begin
  for facilitator, ids in
    select r.facilitator_id, array_agg(r.id) from removed r group by r.facilitator_id
  loop
    with taken as (
      delete from private.archive_terms_to_count c
      where c.facilitator_id = facilitator and c.archive_id = any(ids)
      returning c.archive_id
    )
    select coalesce(array_agg(t.archive_id), '{}') into uncounted from taken t;

    if not exists (select from public.conversation_history_archive a where a.facilitator_id = facilitator) then
      delete from public.archive_term_stats s where s.facilitator_id = facilitator;
      continue;
    end if;
    continue when not exists (select from public.archive_term_stats s
      where s.facilitator_id = facilitator and s.term = '');

    select array_agg(g.term), array_agg(g.conversations), array_agg(g.lexemes)
      into term_list, term_conversations, term_lexemes
    from (
      select t.term, count(*)::integer as conversations, sum(r.lexemes) as lexemes
      from (
        select length(r.search_vector) as lexemes, tsvector_to_array(r.search_vector) as terms
        from removed r
        where r.facilitator_id = facilitator and r.id <> all(uncounted)
        offset 0
      ) r
      cross join lateral unnest(array_prepend('', r.terms)) as t(term)
      group by t.term
    ) g;
    continue when term_list is null;

    delete from public.archive_term_stats s
    using unnest(term_list, term_conversations) as g(term, conversations)
    where s.facilitator_id = facilitator and s.term = g.term and s.conversations <= g.conversations;
    update public.archive_term_stats s
    set conversations = s.conversations - g.conversations, lexemes = s.lexemes - g.lexemes
    from unnest(term_list, term_conversations, term_lexemes) as g(term, conversations, lexemes)
    where s.facilitator_id = facilitator and s.term = g.term;
  end loop;
  return null;
end
$$;

-- Archived conversations rewritten (by a migration): counted out as they
-- were and in as they are, for each facilitator, but those not counted
-- yet, which are counted as they are at commit.
create or replace function public.archive_term_stats_replace() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  facilitator uuid;
  ids uuid[];
  uncounted uuid[] := '{}';
  term_list text[];
  term_conversations integer[];
  term_lexemes bigint[];
begin
  for facilitator, ids in
    select o.facilitator_id, array_agg(o.id) from removed o group by o.facilitator_id
  loop
    uncounted := uncounted || array(select c.archive_id from private.archive_terms_to_count c
      where c.facilitator_id = facilitator and c.archive_id = any(ids));
  end loop;

  for facilitator, term_list, term_conversations, term_lexemes in
    select g.facilitator_id, array_agg(g.term), array_agg(g.conversations), array_agg(g.lexemes)
    from (
      select c.facilitator_id, t.term, sum(c.sign)::integer as conversations, sum(c.sign * c.lexemes) as lexemes
      from (
        select c.facilitator_id, c.sign, length(c.search_vector) as lexemes, tsvector_to_array(c.search_vector) as terms
        from (
          select o.facilitator_id, -1 as sign, o.search_vector
          from removed o join added n on n.id = o.id
          where (n.search_vector is distinct from o.search_vector or n.facilitator_id <> o.facilitator_id)
            and o.id <> all(uncounted)
          union all
          select n.facilitator_id, 1, n.search_vector
          from removed o join added n on n.id = o.id
          where (n.search_vector is distinct from o.search_vector or n.facilitator_id <> o.facilitator_id)
            and o.id <> all(uncounted)
        ) c
        offset 0
      ) c
      cross join lateral unnest(array_prepend('', c.terms)) as t(term)
      group by c.facilitator_id, t.term
      having sum(c.sign) <> 0 or sum(c.sign * c.lexemes) <> 0
    ) g
    group by g.facilitator_id
  loop
    delete from public.archive_term_stats s
    using unnest(term_list, term_conversations) as g(term, conversations)
    where s.facilitator_id = facilitator and s.term = g.term and s.conversations + g.conversations <= 0;
    update public.archive_term_stats s
    set conversations = s.conversations + g.conversations, lexemes = s.lexemes + g.lexemes
    from unnest(term_list, term_conversations, term_lexemes) as g(term, conversations, lexemes)
    where s.facilitator_id = facilitator and s.term = g.term;
    -- Updated rows conflict and stay as updated; deleted ones lost
    -- conversations, and are not inserted again.
    insert into public.archive_term_stats (facilitator_id, term, conversations, lexemes)
    select facilitator, g.term, g.conversations, g.lexemes
    from unnest(term_list, term_conversations, term_lexemes) as g(term, conversations, lexemes)
    where g.conversations > 0
    on conflict (facilitator_id, term) do nothing;
  end loop;
  return null;
end
$$;
