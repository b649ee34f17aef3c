-- The changes the mentor proposes from the chat wait for the facilitator's
-- click (migration 0024). Through Supabase's Data API (role authenticated)
-- a user reads their own pending actions, never another's, and can neither
-- add one nor confirm one: a confirmation that skipped the service would
-- mark an action confirmed without applying it, or apply nothing it
-- checked. The service (memory_service) inserts only pending actions, for
-- the caller, decides each once, and confirms none past its expiry.

begin;
\ir setup/two_facilitators.psql

select plan(24);

-- A's second action, already past its time, for the expiry checks.
select pg_temp.act_as('memory_service', 'a');
insert into public.pending_actions (facilitator_id, learner_id, kind, topic, changes, expires_at)
values (pg_temp.id('a'), pg_temp.id('a_learner'), 'forget_topic', 'fractions', '[{"memory_id": "00000000-0000-4000-8000-000000000001"}]',
  now() + interval '1 minute');
select pg_temp.act_as_owner();
update public.pending_actions set created_at = now() - interval '20 minutes', expires_at = now() - interval '10 minutes'
where facilitator_id = pg_temp.id('a') and kind = 'forget_topic';

create temporary table a_before on commit drop as
  select pg_temp.digest('public.pending_actions', pg_temp.id('a')) as digest;

-- Signed in as A, through the Data API.
select pg_temp.act_as('authenticated', 'a');
select is((select count(*) from public.pending_actions), 2::bigint, 'authenticated as A reads its own two actions');
select is((select count(*) from public.pending_actions where facilitator_id = pg_temp.id('b')), 0::bigint,
  'authenticated as A reads none of B''s actions');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at)
  values (pg_temp.id('a'), 'forget_memory', '[{}]', now() + interval '5 minutes') $$,
  '42501', null, 'authenticated as A adds an action: refused');
select throws_ok($$ update public.pending_actions set status = 'confirmed', decided_at = now()
  where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'authenticated as A confirms its action: refused');
select throws_ok($$ update public.pending_actions set status = 'cancelled', decided_at = now() $$,
  '42501', null, 'authenticated as A cancels its actions: refused');
select throws_ok($$ update public.pending_actions set expires_at = now() + interval '1 day' $$,
  '42501', null, 'authenticated as A postpones its actions: refused');
select throws_ok($$ delete from public.pending_actions $$,
  '42501', null, 'authenticated as A deletes its actions: refused');
select throws_ok($$ update public.pending_actions set status = 'confirmed', decided_at = now()
  where facilitator_id = pg_temp.id('b') $$,
  '42501', null, 'authenticated as A confirms B''s action: refused');

-- The anon key reads nothing.
select pg_temp.act_as('anon');
select throws_ok($$ select * from public.pending_actions $$, '42501', null, 'anon reads the actions: refused');

select pg_temp.act_as_owner();
select is((select digest from a_before), pg_temp.digest('public.pending_actions', pg_temp.id('a')),
  'A''s actions unchanged by the Data API');

-- The service, acting for A.
select pg_temp.act_as('memory_service', 'a');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at)
  values (pg_temp.id('b'), 'forget_memory', '[{}]', now() + interval '5 minutes') $$,
  '42501', null, 'memory_service as A adds an action for B: refused');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at, status, decided_at)
  values (pg_temp.id('a'), 'forget_memory', '[{}]', now() + interval '5 minutes', 'confirmed', now()) $$,
  '42501', null, 'memory_service as A adds an action confirmed already: refused');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at, created_at)
  values (pg_temp.id('a'), 'forget_memory', '[{}]', now() + interval '5 minutes', now() + interval '1 day') $$,
  '42501', null, 'memory_service as A dates an action: refused');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at)
  values (pg_temp.id('a'), 'forget_memory', '[{}]', now() + interval '2 hours') $$,
  '23514', null, 'memory_service as A gives an action more than an hour: refused');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at)
  values (pg_temp.id('a'), 'delete_everything', '[{}]', now() + interval '5 minutes') $$,
  '23514', null, 'memory_service as A adds an action of an unknown kind: refused');
select throws_ok($$ insert into public.pending_actions (facilitator_id, kind, changes, expires_at)
  values (pg_temp.id('a'), 'forget_memory', '[]', now() + interval '5 minutes') $$,
  '23514', null, 'memory_service as A adds an action that changes nothing: refused');
select throws_ok($$ update public.pending_actions set status = 'confirmed', decided_at = now()
  where facilitator_id = pg_temp.id('a') and kind = 'forget_topic' $$,
  '42501', null, 'memory_service as A confirms its expired action: refused');
select throws_ok($$ update public.pending_actions set expires_at = now() + interval '1 hour' $$,
  '42501', null, 'memory_service as A postpones its actions: refused');
select throws_ok($$ delete from public.pending_actions $$,
  '42501', null, 'memory_service as A deletes its actions: refused');
select is(pg_temp.row_count($$ update public.pending_actions set status = 'cancelled', decided_at = now()
  where facilitator_id = pg_temp.id('b') $$), 0::bigint, 'memory_service as A cancels B''s action: no rows');

select is(pg_temp.row_count($$ update public.pending_actions set status = 'confirmed', decided_at = now()
  where facilitator_id = pg_temp.id('a') and kind = 'forget_memory' $$), 1::bigint,
  'memory_service as A confirms its pending action');
select is(pg_temp.row_count($$ update public.pending_actions set status = 'confirmed', decided_at = now()
  where facilitator_id = pg_temp.id('a') and kind = 'forget_memory' $$), 0::bigint,
  'memory_service as A confirms it again: no rows (decided once)');
select is(pg_temp.row_count($$ update public.pending_actions set status = 'cancelled'
  where facilitator_id = pg_temp.id('a') and kind = 'forget_memory' $$), 0::bigint,
  'memory_service as A cancels its confirmed action: no rows');
select throws_ok($$ update public.pending_actions set status = 'pending', decided_at = null
  where facilitator_id = pg_temp.id('a') and kind = 'forget_topic' $$,
  '42501', null, 'memory_service as A leaves an action pending while deciding it: refused');

select * from finish();
rollback;
