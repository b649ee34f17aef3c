-- The archive's search statistics (migration 0031): how many of a
-- facilitator's archived conversations hold each term, which BM25 reads
-- instead of every conversation. A facilitator reads their own and no
-- one else's; nobody writes them but the archive's triggers, which keep
-- them what the conversations' vectors say, through an erasure too, and
-- the list of conversations still to count is out of every request role's
-- reach. The views search reads through (the archived words, migration
-- 0038, and the turns, migration 0058) show the service the caller's rows
-- alone, and nobody else anything.

begin;
\ir setup/two_facilitators.psql

select plan(32);

-- The statistics recomputed from the facilitator's archived vectors,
-- against those kept: the terms that differ (none when they agree).
create function pg_temp.drift(who text) returns text[]
language sql
as $$
  with recomputed as (
    select t.term, count(*)::integer as conversations, sum(length(a.search_vector)) as lexemes
    from public.conversation_history_archive a
    cross join lateral unnest(array_prepend('', tsvector_to_array(a.search_vector))) as t(term)
    where a.facilitator_id = pg_temp.id(who)
    group by t.term
  ), kept as (
    select term, conversations, lexemes from public.archive_term_stats where facilitator_id = pg_temp.id(who)
  )
  select coalesce(array_agg(coalesce(k.term, r.term) order by coalesce(k.term, r.term)), '{}')
  from kept k full join recomputed r using (term)
  where k.conversations is distinct from r.conversations or k.lexemes is distinct from r.lexemes
$$;

-- A general conversation of A's archived beside Emma's (as the archiving
-- trigger writes it), sharing the word fractions.
insert into public.conversation_history_archive (facilitator_id, learner_id, summary, conversation_turns, turn_count)
values (pg_temp.id('a'), null, 'Fractions at dinner.',
  '[{"role": "user", "content": "Fractions came up at dinner, and the homework too."}]', 1);

select is(pg_temp.drift('a'), '{}'::text[], 'A''s statistics are what its archived vectors say');
select is(pg_temp.drift('b'), '{}'::text[], 'B''s statistics are what its archived vectors say');
select is((select conversations from public.archive_term_stats where facilitator_id = pg_temp.id('a') and term = ''), 2,
  'A''s statistics count its two archived conversations');
select is((select conversations from public.archive_term_stats where facilitator_id = pg_temp.id('a') and term = 'fraction'), 2,
  'both of A''s archived conversations hold fractions');

create temporary table b_archives on commit drop as
  select id from public.conversation_history_archive where facilitator_id = pg_temp.id('b');
grant select on b_archives to public;

-- Signed in through the Data API: their own rows, read only.
select pg_temp.act_as('authenticated', 'a');
select throws_ok($$ select count(*) from private.caller_archive_words $$, '42501', null,
  'authenticated as A reads the view of archived words: refused');
select throws_ok($$ select count(*) from private.caller_turns $$, '42501', null,
  'authenticated as A reads the view of turns: refused');
select is((select count(*) from public.archive_term_stats where facilitator_id <> pg_temp.id('a')), 0::bigint,
  'authenticated as A reads no other facilitator''s statistics');
select cmp_ok((select count(*) from public.archive_term_stats), '>', 0::bigint, 'authenticated as A reads its own statistics');
select throws_ok($$ insert into public.archive_term_stats (facilitator_id, term, conversations, lexemes)
  values (pg_temp.id('a'), 'planted', 1000, 1) $$, '42501', null, 'authenticated as A adds a term to its statistics: refused');
select throws_ok($$ update public.archive_term_stats set conversations = 1 $$, '42501', null,
  'authenticated as A changes its statistics: refused');
select throws_ok($$ delete from public.archive_term_stats $$, '42501', null, 'authenticated as A deletes its statistics: refused');
select throws_ok($$ select count(*) from private.archive_terms_to_count $$, '42501', null,
  'authenticated as A reads the list of conversations to count: refused');

-- The service's own role: reads as A, writes nothing.
select pg_temp.act_as('memory_service', 'a');
select is((select count(*) from private.caller_archive_words), 2::bigint,
  'memory_service as A finds its own archived conversations through the view of their words');
select is((select count(*) from private.caller_archive_words w join b_archives b using (id)), 0::bigint,
  'memory_service as A finds none of B''s through the view');
select is((select count(*) from private.caller_turns where facilitator_id <> pg_temp.id('a')), 0::bigint,
  'memory_service as A reads none of B''s turns through the view of turns');
select is((select count(*) from private.caller_turns), (select count(*) from public.conversation_turns),
  'memory_service as A reads through the view of turns the turns its policy lets it read');
select is((select count(*) from public.archive_term_stats where facilitator_id = pg_temp.id('b')), 0::bigint,
  'memory_service as A reads none of B''s statistics');
select throws_ok($$ update public.archive_term_stats set conversations = conversations + 100 where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A skews its statistics: refused (only the archive''s triggers count)');
select throws_ok($$ insert into public.archive_term_stats (facilitator_id, term, conversations, lexemes)
  values (pg_temp.id('a'), 'planted', 1000, 1) $$, '42501', null, 'memory_service as A adds a term: refused');
select throws_ok($$ delete from public.archive_term_stats where facilitator_id = pg_temp.id('a') $$, '42501', null,
  'memory_service as A deletes its statistics: refused');
select throws_ok($$ insert into private.archive_terms_to_count values (pg_temp.id('a'), gen_random_uuid()) $$, '42501', null,
  'memory_service as A adds to the list of conversations to count: refused');
select throws_ok($$ select public.archive_term_stats_remove() $$, '42501', null,
  'memory_service calls a counting trigger''s function: refused');

-- Anonymous callers see nothing.
select pg_temp.act_as('anon');
select throws_ok($$ select count(*) from public.archive_term_stats $$, '42501', null, 'anon reads statistics: refused');
select throws_ok($$ select count(*) from private.caller_archive_words $$, '42501', null, 'anon reads the view of archived words: refused');
select throws_ok($$ select count(*) from private.caller_turns $$, '42501', null, 'anon reads the view of turns: refused');
select pg_temp.act_as_owner();

-- A erases Emma: her conversation is counted out, the general one stays.
select pg_temp.act_as('memory_service', 'a');
select public.erase('learner', pg_temp.id('a_learner'));
select pg_temp.act_as_owner();
select is(pg_temp.drift('a'), '{}'::text[], 'after erasing Emma, A''s statistics are what its archived vectors say');
select is((select conversations from public.archive_term_stats where facilitator_id = pg_temp.id('a') and term = ''), 1,
  'A''s statistics count the one archived conversation left');
select ok(not exists (select from public.archive_term_stats where facilitator_id = pg_temp.id('a') and term in ('decim', 'pizza', 'emma')),
  'the words only Emma''s conversation held are gone from A''s statistics');
select is((select conversations from public.archive_term_stats where facilitator_id = pg_temp.id('a') and term = 'fraction'), 1,
  'a word the general conversation holds too stays, counted once');
select is(pg_temp.drift('b'), '{}'::text[], 'B''s statistics unchanged by the erasure of A''s learner');

-- A erases the account, and B is deleted in Supabase Auth: nothing left.
select pg_temp.act_as('memory_service', 'a');
select public.erase('account', null);
select pg_temp.act_as_owner();
select is((select count(*) from public.archive_term_stats where facilitator_id = pg_temp.id('a')), 0::bigint,
  'no statistics of A''s are left after erasing the account');
delete from auth.users where id = pg_temp.id('b');
select is((select count(*) from public.archive_term_stats where facilitator_id = pg_temp.id('b')), 0::bigint,
  'no statistics of B''s are left after deleting the user');

select * from finish();
rollback;
