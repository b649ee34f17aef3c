-- Search's statistics of each facilitator's archive, kept as the archive
-- changes. BM25 weighs a question's words by how many of the facilitator's
-- conversations hold them and normalises by the conversations' lengths:
-- until now search worked both out from every archived conversation's
-- search vector, on every search, so its cost grew with the facilitator's
-- history (a teacher talking about a class every day archives thousands of
-- conversations a year). Here they are counted once, when a conversation
-- is archived, and search reads the few rows of its words.
--
-- Each count below reads a vector's length and terms once, in a subquery
-- kept apart (offset 0), so that the rows it groups carry a length and a
-- term, not the vector: carried along, the vectors made the first count
-- of the benchmark's archive sort tens of gigabytes.
--
-- A row per facilitator and term: how many of their archived
-- conversations hold the term, and those conversations' lengths (their
-- search vectors' lexeme counts) summed. The row whose term is '' counts
-- every archived conversation (a search vector has no empty lexeme), so
-- it holds the number of conversations and their total length, from
-- which search takes the average. A term no archived conversation holds
-- has no row.
create table public.archive_term_stats (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  term text not null,
  conversations integer not null check (conversations > 0),
  lexemes bigint not null check (lexemes >= 0),
  primary key (facilitator_id, term)
);

-- Read by the facilitator (search runs as them), written by nobody but the
-- triggers below: counts a caller could change would skew their ranking.
alter table public.archive_term_stats enable row level security;
revoke all on public.archive_term_stats from anon;
revoke insert, update, delete, truncate, trigger, references on public.archive_term_stats from authenticated;
grant select on public.archive_term_stats to authenticated;
create policy archive_term_stats_select on public.archive_term_stats for select to authenticated
  using ((select auth.uid()) = facilitator_id);

-- Archived conversations added (by archiving, an import, a clear) are
-- counted when their transaction commits, all of them at once: an import
-- adds thousands in one transaction, one statement each, and counting each
-- as it came would update the same rows (the '' row, the common words)
-- thousands of times in one transaction, each time walking the versions
-- left before. The transaction's additions wait in a private list, apart
-- from public (no request role can reach it), which is empty again when
-- the transaction ends.
create schema if not exists private;
revoke all on schema private from public;

create table private.archive_terms_to_count (
  facilitator_id uuid not null,
  archive_id uuid not null,
  primary key (facilitator_id, archive_id)
);

create function public.archive_term_stats_add() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  insert into private.archive_terms_to_count (facilitator_id, archive_id)
  select a.facilitator_id, a.id from added a;
  return null;
end
$$;

-- At commit, the first of the transaction's additions for a facilitator
-- counts all of theirs, in one statement, in the order of the key, so that
-- two transactions counting the same facilitator's terms lock the rows in
-- one order and never deadlock; the others find theirs counted. (Found by
-- the key, not by reading the list whole: the list keeps the rows earlier
-- transactions deleted until vacuum.) A conversation the transaction
-- removed again is not counted (see below).
create function public.archive_term_stats_count() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if not exists (select from private.archive_terms_to_count c
      where c.facilitator_id = new.facilitator_id and c.archive_id = new.archive_id) then
    return null;
  end if;
  with taken as (
    delete from private.archive_terms_to_count c where c.facilitator_id = new.facilitator_id
    returning c.facilitator_id, c.archive_id
  )
  insert into public.archive_term_stats as s (facilitator_id, term, conversations, lexemes)
  select a.facilitator_id, t.term, count(*), sum(a.lexemes)
  from (
    select a.facilitator_id, length(a.search_vector) as lexemes, tsvector_to_array(a.search_vector) as terms
    from taken k
    join public.conversation_history_archive a on a.facilitator_id = k.facilitator_id and a.id = k.archive_id
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

-- Archived conversations removed (a learner or an account erased, a
-- learner deleted, the user deleted): their terms are counted out, and a
-- term no conversation holds any more loses its row, so no word of what
-- was erased stays here. A facilitator whose archive went whole loses all
-- their rows at once, without reading the vectors. One added in the same
-- transaction was not counted yet, and now never is.
create function public.archive_term_stats_remove() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  delete from public.archive_term_stats s
  where s.facilitator_id in (
    select distinct r.facilitator_id from removed r
    where not exists (select from public.conversation_history_archive a where a.facilitator_id = r.facilitator_id));

  merge into public.archive_term_stats s
  using (
    select r.facilitator_id, t.term, count(*) as conversations, sum(r.lexemes) as lexemes
    from (
      select r.facilitator_id, length(r.search_vector) as lexemes, tsvector_to_array(r.search_vector) as terms
      from removed r
      where exists (select from public.archive_term_stats k where k.facilitator_id = r.facilitator_id and k.term = '')
        and not exists (select from private.archive_terms_to_count c
          where c.facilitator_id = r.facilitator_id and c.archive_id = r.id)
      offset 0
    ) r
    cross join lateral unnest(array_prepend('', r.terms)) as t(term)
    group by r.facilitator_id, t.term
  ) g on s.facilitator_id = g.facilitator_id and s.term = g.term
  when matched and s.conversations <= g.conversations then delete
  when matched then update set conversations = s.conversations - g.conversations, lexemes = s.lexemes - g.lexemes;

  delete from private.archive_terms_to_count c
  using removed r where c.facilitator_id = r.facilitator_id and c.archive_id = r.id;
  return null;
end
$$;

-- An archived conversation is never changed by a request (the archive is
-- append-only, migration 0013); a migration that rewrites rows changes
-- their search vectors, which are counted out as they were and in as they
-- are (those not counted yet will be counted as they are at commit).
create function public.archive_term_stats_replace() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  merge into public.archive_term_stats s
  using (
    select c.facilitator_id, t.term, sum(c.sign)::integer as conversations, sum(c.sign * c.lexemes) as lexemes
    from (
      select c.facilitator_id, c.sign, length(c.search_vector) as lexemes, tsvector_to_array(c.search_vector) as terms
      from (
        select o.facilitator_id, -1 as sign, o.search_vector
        from removed o join added n on n.id = o.id
        where (n.search_vector is distinct from o.search_vector or n.facilitator_id <> o.facilitator_id)
          and not exists (select from private.archive_terms_to_count c
            where c.facilitator_id = o.facilitator_id and c.archive_id = o.id)
        union all
        select n.facilitator_id, 1, n.search_vector
        from removed o join added n on n.id = o.id
        where (n.search_vector is distinct from o.search_vector or n.facilitator_id <> o.facilitator_id)
          and not exists (select from private.archive_terms_to_count c
            where c.facilitator_id = o.facilitator_id and c.archive_id = o.id)
      ) c
      offset 0
    ) c
    cross join lateral unnest(array_prepend('', c.terms)) as t(term)
    group by c.facilitator_id, t.term
    having sum(c.sign) <> 0 or sum(c.sign * c.lexemes) <> 0
  ) g on s.facilitator_id = g.facilitator_id and s.term = g.term
  when matched and s.conversations + g.conversations <= 0 then delete
  when matched then update set conversations = s.conversations + g.conversations, lexemes = s.lexemes + g.lexemes
  when not matched and g.conversations > 0 then
    insert (facilitator_id, term, conversations, lexemes) values (g.facilitator_id, g.term, g.conversations, g.lexemes);
  return null;
end
$$;

-- The archive emptied at once, by its owner: nothing is left to count.
create function public.archive_term_stats_clear() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  delete from public.archive_term_stats;
  delete from private.archive_terms_to_count;
  return null;
end
$$;

revoke execute on function public.archive_term_stats_add() from public, anon, authenticated;
revoke execute on function public.archive_term_stats_count() from public, anon, authenticated;
revoke execute on function public.archive_term_stats_remove() from public, anon, authenticated;
revoke execute on function public.archive_term_stats_replace() from public, anon, authenticated;
revoke execute on function public.archive_term_stats_clear() from public, anon, authenticated;

create trigger term_stats_add
after insert on public.conversation_history_archive
referencing new table as added
for each statement execute function public.archive_term_stats_add();

create constraint trigger count_terms
after insert on private.archive_terms_to_count
deferrable initially deferred
for each row execute function public.archive_term_stats_count();

create trigger term_stats_remove
after delete on public.conversation_history_archive
referencing old table as removed
for each statement execute function public.archive_term_stats_remove();

create trigger term_stats_replace
after update on public.conversation_history_archive
referencing old table as removed new table as added
for each statement execute function public.archive_term_stats_replace();

create trigger term_stats_clear
after truncate on public.conversation_history_archive
for each statement execute function public.archive_term_stats_clear();

-- The archive so far, counted once, with the memory to aggregate it whole
-- (it blocks archiving meanwhile: the triggers above lock the archive).
set local work_mem = '256MB';
insert into public.archive_term_stats (facilitator_id, term, conversations, lexemes)
select a.facilitator_id, t.term, count(*), sum(a.lexemes)
from (
  select a.facilitator_id, length(a.search_vector) as lexemes, tsvector_to_array(a.search_vector) as terms
  from public.conversation_history_archive a
  offset 0
) a
cross join lateral unnest(array_prepend('', a.terms)) as t(term)
group by a.facilitator_id, t.term;
