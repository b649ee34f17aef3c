-- Migration 0014_search_vocabulary_capped of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0014_search_vocabulary_capped.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0014_search_vocabulary_capped') then
      raise exception 'migration 0014_search_vocabulary_capped was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000014; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- A facilitator's search vocabulary (the words misspelled searches are
-- corrected to) is capped at 20,000 words. Correcting a word searches the
-- whole vocabulary by trigram, and posts of made-up words within the API's
-- limits once grew one to 190,000 words, making a search of unknown words
-- run for seconds and hold a connection every other facilitator needed.
-- 20,000 is more distinct words than years of conversations about one
-- family's learners use.
--
-- When a post takes the vocabulary past the cap, the oldest words leave
-- until 18,000 remain, so the trim runs once per 2,000 new words, not on
-- every post. A word still in use comes back, as new, the next time it is
-- said. The count runs only when a post added a word, and reads at most
-- 20,000 index entries.
alter table public.search_vocabulary add column added_at timestamptz not null default now();
create index search_vocabulary_oldest on public.search_vocabulary (facilitator_id, added_at);

create or replace function public.conversation_turns_collect_words() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  grown uuid[];
  facilitator uuid;
  words bigint;
begin
  with added as (
    insert into public.search_vocabulary (facilitator_id, word)
    select distinct n.facilitator_id, w.word
    from new_turns n
    cross join lateral unnest(tsvector_to_array(to_tsvector('simple', n.content))) as w(word)
    where char_length(w.word) between 4 and 40 and w.word ~ '^[[:alpha:]]+$'
      and not exists (
        select 1 from public.search_vocabulary v
        where v.facilitator_id = n.facilitator_id and v.word = w.word)
    on conflict do nothing
    returning facilitator_id)
  select array_agg(distinct a.facilitator_id) into grown from added a;

  foreach facilitator in array coalesce(grown, '{}') loop
    select count(*) into words from public.search_vocabulary v where v.facilitator_id = facilitator;
    if words > 20000 then
      delete from public.search_vocabulary v
      where v.facilitator_id = facilitator and v.word in (
        select o.word from public.search_vocabulary o
        where o.facilitator_id = facilitator
        order by o.added_at, o.word
        limit words - 18000);
    end if;
  end loop;
  return null;
end
$$;

insert into public.memory_migrations (version) values ('0014_search_vocabulary_capped');
