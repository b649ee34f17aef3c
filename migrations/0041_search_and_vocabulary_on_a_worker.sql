-- Two statements that Citus runs on the worker holding a facilitator's
-- shard, rewritten so that it can: search's vector of an active
-- conversation, and the trigger collecting the words of new turns.

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

-- The words of new turns go to the search vocabulary (migrations 0002, 0010
-- and 0014) by statements that each name one facilitator. On Citus the
-- trigger runs on the worker that holds the turns' shard, and its
-- statements run there as queries of the distributed vocabulary: one that
-- joins the statement's new turns (a transition table, which only that
-- worker has) to the vocabulary of every facilitator in them cannot be
-- planned there ("could not run distributed query with complex table
-- expressions"). The words are now gathered from the new turns alone, a
-- list per facilitator, and each statement on the vocabulary names its
-- facilitator, which Citus sends to that facilitator's shard, on the same
-- worker. It does what it did: known words are left out by one lookup of
-- the facilitator's vocabulary before the insert, two posts adding the
-- same new word at once still meet the conflict clause, and the
-- vocabulary is trimmed past 20,000 words only when words were added.
create or replace function public.conversation_turns_collect_words() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  facilitator uuid;
  said text[];
  known text[];
  added bigint;
  words bigint;
begin
  for facilitator, said in
    select n.facilitator_id, array_agg(distinct w.word)
    from new_turns n
    cross join lateral unnest(tsvector_to_array(to_tsvector('simple', n.content))) as w(word)
    where char_length(w.word) between 4 and 40 and w.word ~ '^[[:alpha:]]+$'
    group by n.facilitator_id
  loop
    select coalesce(array_agg(v.word), '{}') into known
    from public.search_vocabulary v
    where v.facilitator_id = facilitator and v.word = any(said);

    insert into public.search_vocabulary (facilitator_id, word)
    select facilitator, w.word from unnest(said) as w(word)
    where w.word <> all(known)
    on conflict do nothing;
    get diagnostics added = row_count;

    if added > 0 then
      select count(*) into words from public.search_vocabulary v where v.facilitator_id = facilitator;
      if words > 20000 then
        delete from public.search_vocabulary v
        where v.facilitator_id = facilitator and v.word in (
          select o.word from public.search_vocabulary o
          where o.facilitator_id = facilitator
          order by o.added_at, o.word
          limit words - 18000);
      end if;
    end if;
  end loop;
  return null;
end
$$;
