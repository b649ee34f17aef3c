-- The vocabulary's cap (migration 0014, statements as in 0041) was checked
-- by counting the facilitator's words after every insert that added one:
-- an index scan of the whole vocabulary, 1 ms for a teacher with 8,000
-- words and about 2.5 ms at the cap, in every such post. The cap is there
-- to bound the vocabulary's size, and being a few dozen words past it for a
-- while harms nothing, so a post that adds a few words counts them one
-- time in eight (at random, so no facilitator's posts skip it for long),
-- and one that adds many (an import, a long turn) always does. The trim
-- itself is unchanged: past 20,000 words, the oldest leave until 18,000
-- remain.
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

    if added >= 64 or (added > 0 and random() < 0.125) then
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
