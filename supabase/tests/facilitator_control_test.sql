-- The facilitator's controls of migration 0025: the learning switch (per
-- learner, per account) and retention. Settings change what the service
-- learns and forgets, so they are written only through the service's API,
-- which checks them: a signed-in user reads their own settings through the
-- Data API and writes none, not even their own, and nobody reaches another
-- facilitator's. The worker's retention sweep and the clear's removal of an
-- opening are the service's alone.

begin;
\ir setup/two_facilitators.psql

select plan(26);

create temporary table b_before on commit drop as
  select (select s::text from public.facilitator_settings s where s.facilitator_id = pg_temp.id('b')) as account,
    (select l::text from public.learner_settings l where l.facilitator_id = pg_temp.id('b')) as learner;
grant select on b_before to public;

-- Signed in through the Data API: read own, write nothing.
select pg_temp.act_as('authenticated', 'a');
select is((select count(*) from public.facilitator_settings), 1::bigint, 'authenticated as A reads its own account settings only');
select is((select count(*) from public.learner_settings), 1::bigint, 'authenticated as A reads its own learner settings only');
select is((select count(*) from public.facilitator_settings where facilitator_id = pg_temp.id('b')), 0::bigint,
  'authenticated as A reads none of B''s account settings');
select throws_ok($$ update public.facilitator_settings set learning = false where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'authenticated as A turns its own learning off through the Data API: refused');
select throws_ok($$ update public.facilitator_settings set retention_days = 1 where facilitator_id = pg_temp.id('b') $$,
  '42501', null, 'authenticated as A sets B''s retention: refused');
select throws_ok($$ insert into public.facilitator_settings (facilitator_id, learning) values (pg_temp.id('b'), false) $$,
  '42501', null, 'authenticated as A inserts settings for B: refused');
select throws_ok($$ delete from public.facilitator_settings $$,
  '42501', null, 'authenticated as A deletes account settings: refused');
select throws_ok($$ update public.learner_settings set learning = false $$,
  '42501', null, 'authenticated as A changes learner settings: refused');
select throws_ok($$ insert into public.learner_settings (facilitator_id, learner_id, learning)
  values (pg_temp.id('b'), pg_temp.id('b_learner'), false) $$,
  '42501', null, 'authenticated as A turns off learning about B''s learner: refused');
select throws_ok($$ delete from public.learner_settings $$,
  '42501', null, 'authenticated as A deletes learner settings: refused');
select throws_ok($$ select public.forget_unconfirmed_memories(100) $$,
  '42501', null, 'authenticated as A runs the retention sweep: refused');
select throws_ok($$ delete from public.session_openings $$,
  '42501', null, 'authenticated as A deletes openings: refused');

-- The service's own role, as A: its own rows only, within the limits.
select pg_temp.act_as('memory_service', 'a');
select is(pg_temp.row_count($$ update public.facilitator_settings set learning = false where facilitator_id = pg_temp.id('b') $$),
  0::bigint, 'memory_service as A changes none of B''s account settings');
select is(pg_temp.row_count($$ update public.learner_settings set learning = false where facilitator_id = pg_temp.id('b') $$),
  0::bigint, 'memory_service as A changes none of B''s learner settings');
select throws_ok($$ insert into public.learner_settings (facilitator_id, learner_id, learning)
  values (pg_temp.id('b'), pg_temp.id('b_learner'), false) $$,
  '42501', null, 'memory_service as A inserts settings for B: refused by the policy');
select throws_ok($$ insert into public.learner_settings (facilitator_id, learner_id, learning)
  values (pg_temp.id('a'), pg_temp.id('b_learner'), false) $$,
  '23503', null, 'memory_service as A hangs a setting on B''s learner: refused by the foreign key');
select throws_ok($$ update public.facilitator_settings set retention_days = 0 where facilitator_id = pg_temp.id('a') $$,
  '23514', null, 'a retention of 0 days: refused by the check');
select throws_ok($$ update public.facilitator_settings set retention_days = 3651 where facilitator_id = pg_temp.id('a') $$,
  '23514', null, 'a retention of more than 3650 days: refused by the check');
select throws_ok($$ delete from public.facilitator_settings $$,
  '42501', null, 'memory_service deletes account settings: refused (settings change, they do not go)');
select throws_ok($$ select public.forget_unconfirmed_memories(100) $$,
  '42501', null, 'memory_service runs the retention sweep across facilitators: refused');
select is(pg_temp.row_count($$ delete from public.session_openings where facilitator_id = pg_temp.id('b') $$),
  0::bigint, 'memory_service as A deletes none of B''s openings');
select is(pg_temp.row_count($$ delete from public.session_openings $$),
  1::bigint, 'memory_service as A deletes its own opening, as a clear does');
select is(public.memory_learning_on(pg_temp.id('b'), pg_temp.id('b_learner')), true,
  'memory_learning_on as A reads none of B''s settings (the default)');

-- Anonymous callers see nothing.
select pg_temp.act_as('anon');
select throws_ok($$ select count(*) from public.facilitator_settings $$,
  '42501', null, 'anon reads account settings: refused');
select throws_ok($$ select count(*) from public.learner_settings $$,
  '42501', null, 'anon reads learner settings: refused');

select pg_temp.act_as_owner();
select is(
  ((select s::text from public.facilitator_settings s where s.facilitator_id = pg_temp.id('b')),
   (select l::text from public.learner_settings l where l.facilitator_id = pg_temp.id('b'))),
  (select (account, learner) from b_before),
  'B''s settings are as they were');

select * from finish();
rollback;
