-- The limits of migration 0013 (the service writes as memory_service,
-- signed-in users write nothing, and the database keeps the API's limits).
-- On a database migrated only up to 0012 every test here fails; that is
-- the sign to migrate.
--
-- Through the Data API a signed-in user cannot queue a job that bills the
-- model, forge an archived conversation, or set the counters and the
-- search vector the service keeps. Whoever writes, the service included,
-- a turn is 1 to 20,000 characters, a memory's metadata a flat object of
-- at most 16 short keys and values, and its source turns at most 100; an
-- archived conversation covers the time its turns were said (migration
-- 0029).

begin;
\ir setup/two_facilitators.psql

select plan(38);

-- What the Data API may no longer write.
select pg_temp.act_as('authenticated', 'a');
select throws_ok($$ insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload)
  values (pg_temp.id('a'), pg_temp.id('a_learner'), 'extract', 'turns:1-2',
    '{"session_id": "00000000-0000-4000-8000-000000000000", "from_turn_id": 1, "through_turn_id": 2}') $$,
  '42501', null, 'authenticated as A queues an extraction job: refused');
select throws_ok($$ insert into public.conversation_history_archive (facilitator_id, learner_id, summary, conversation_turns, turn_count)
  values (pg_temp.id('a'), pg_temp.id('a_learner'), 'forged', '[{"role": "user", "content": "forged"}]', 1) $$,
  '42501', null, 'authenticated as A adds an archived conversation: refused');
select throws_ok($$ update public.conversation_updates set turn_count = 0 where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'authenticated as A sets its conversation''s turn_count: refused');
select throws_ok($$ update public.conversation_updates set turns_vector = 'planted'::tsvector where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'authenticated as A sets its conversation''s search vector (turns_vector): refused');
select throws_ok($$ insert into public.conversation_updates (facilitator_id, learner_id, turn_count, turns_vector)
  values (pg_temp.id('a'), null, 1000000, 'planted'::tsvector) $$,
  '42501', null, 'authenticated as A creates a conversation with its own counts: refused');
select throws_ok($$ update public.mentor_sessions set exchanges = 1000000 where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'authenticated as A sets its session''s exchanges: refused');
select throws_ok($$ insert into public.mentor_sessions (facilitator_id, learner_id, exchanges)
  values (pg_temp.id('a'), pg_temp.id('a_learner'), 1000000) $$,
  '42501', null, 'authenticated as A starts a session with its own exchange count: refused');
select pg_temp.act_as_owner();

-- The same, as the privileges say, column by column.
select ok(not has_column_privilege('authenticated', 'public.conversation_updates', c.col, p.privilege),
  format('authenticated holds no %s on conversation_updates.%s', p.privilege, c.col))
from (values ('turn_count'), ('turns_vector'), ('first_turn_at'), ('last_turn_at')) c(col)
cross join (values ('INSERT'), ('UPDATE')) p(privilege)
order by c.col, p.privilege;
select ok(not has_column_privilege('authenticated', 'public.mentor_sessions', 'exchanges', p.privilege),
  format('authenticated holds no %s on mentor_sessions.exchanges', p.privilege))
from (values ('INSERT'), ('UPDATE')) p(privilege)
order by p.privilege;
-- search_vector(c) is computed from the summary and turns_vector when
-- search reads it (migration 0009): there is no stored vector to set.
select ok(not exists (select from pg_attribute where attrelid = 'public.conversation_updates'::regclass
    and attname = 'search_vector' and not attisdropped),
  'conversation_updates stores no search_vector a writer could set');

-- A memory to write, with its metadata and source turns as given.
create function pg_temp.insert_memory(metadata jsonb, source_turn_ids bigint[] default '{}') returns text
language sql stable
as $$
  select format('insert into public.learner_memories (facilitator_id, learner_id, type, content, importance, confidence, metadata, source, source_turn_ids)
    values (%L, %L, ''personal'', ''Emma plays the violin'', 0.5, 0.5, %L, ''added'', %L)',
    pg_temp.id('a'), pg_temp.id('a_learner'), metadata, source_turn_ids)
$$;
-- Metadata of n keys, k1 … kn, each with a short value.
create function pg_temp.metadata_of(n int) returns jsonb
language sql immutable
as $$ select coalesce(jsonb_object_agg('k' || i, 'v'), '{}') from generate_series(1, n) i $$;
-- The row update that writes what the insert would.
create function pg_temp.update_memories(assignment text) returns text
language sql stable
as $$ select format('update public.learner_memories set %s where facilitator_id = %L', assignment, pg_temp.id('a')) $$;

-- The limits hold for any writer: the service's role, writing directly.
select pg_temp.act_as('memory_service', 'a');

select throws_ok(format($$ insert into public.conversation_turns (facilitator_id, learner_id, role, content)
  values (%L, %L, 'user', repeat('a', 20001)) $$, pg_temp.id('a'), pg_temp.id('a_learner')),
  '23514', null, 'a turn of 20,001 characters: refused');
select lives_ok(format($$ insert into public.conversation_turns (facilitator_id, learner_id, role, content)
  values (%L, %L, 'user', repeat('a', 20000)) $$, pg_temp.id('a'), pg_temp.id('a_learner')),
  'a turn of 20,000 characters: stored');
select throws_ok(format($$ insert into public.conversation_turns (facilitator_id, learner_id, role, content)
  values (%L, %L, 'user', '') $$, pg_temp.id('a'), pg_temp.id('a_learner')),
  '23514', null, 'an empty turn: refused');

-- The service adds its own archived conversations as an import does; the
-- span of time one covers is its turns', whatever the writer claims.
insert into public.conversation_history_archive
  (id, facilitator_id, summary, conversation_turns, turn_count, first_turn_at, last_turn_at)
values ('00000000-0000-4000-8000-00000000a029', pg_temp.id('a'), 'Imported history',
  '[{"role": "user", "content": "Sam went to the aquarium", "created_at": "2023-12-05T09:00:00Z"},
    {"role": "assistant", "content": "Lovely", "created_at": "2023-12-04T18:30:00Z"}]', 2,
  '2001-01-01T00:00:00Z', '2099-01-01T00:00:00Z');
select is((select array[first_turn_at, last_turn_at] from public.conversation_history_archive
    where id = '00000000-0000-4000-8000-00000000a029'),
  array['2023-12-04T18:30:00Z', '2023-12-05T09:00:00Z']::timestamptz[],
  'an archived conversation covers the time of its turns, not the span its writer claims');
select col_not_null('public', 'conversation_history_archive', c.col,
  format('every archived conversation has its %s', c.col))
from (values ('first_turn_at'), ('last_turn_at')) c(col)
order by c.col;

select throws_ok(pg_temp.insert_memory(pg_temp.metadata_of(17)), '23514', null,
  'a memory with 17 metadata keys: refused');
select lives_ok(pg_temp.insert_memory(pg_temp.metadata_of(16)), 'a memory with 16 metadata keys: stored');
select throws_ok(pg_temp.update_memories(format('metadata = %L', pg_temp.metadata_of(17))), '23514', null,
  'a memory updated to 17 metadata keys: refused');
select throws_ok(pg_temp.insert_memory(jsonb_build_object('topic', repeat('x', 201))), '23514', null,
  'a metadata value of 201 characters: refused');
select lives_ok(pg_temp.insert_memory(jsonb_build_object('topic', repeat('x', 200))),
  'a metadata value of 200 characters: stored');
select throws_ok(pg_temp.update_memories(format('metadata = %L', jsonb_build_object('topic', repeat('x', 201)))),
  '23514', null, 'a memory updated to a metadata value of 201 characters: refused');
select throws_ok(pg_temp.insert_memory(jsonb_build_object(repeat('k', 41), 'v')), '23514', null,
  'a metadata key of 41 characters: refused');
select throws_ok(pg_temp.insert_memory('{"Topic": "violin"}'), '23514', null,
  'a metadata key that is not lower case: refused');
select throws_ok(pg_temp.insert_memory('{"topic": {"nested": "violin"}}'), '23514', null,
  'a nested metadata value: refused');
select throws_ok(pg_temp.insert_memory('{"topics": ["violin", "piano"]}'), '23514', null,
  'a list as a metadata value: refused');
select lives_ok(pg_temp.insert_memory('{"topic": "violin", "weekly": true, "since_year": 2024}'),
  'metadata of strings, a boolean and a number: stored');

select throws_ok(pg_temp.insert_memory('{}', array(select generate_series(1, 101)::bigint)), '23514', null,
  'a memory learnt from 101 turns: refused');
select lives_ok(pg_temp.insert_memory('{}', array(select generate_series(1, 100)::bigint)),
  'a memory learnt from 100 turns: stored');
select throws_ok(pg_temp.update_memories('source_turn_ids = array(select generate_series(1, 101)::bigint)'),
  '23514', null, 'a memory updated to 101 source turns: refused');

select pg_temp.act_as_owner();

select * from finish();
rollback;
