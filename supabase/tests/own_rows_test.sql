-- What a facilitator may do with their own rows. Through Supabase's Data
-- API (role authenticated) they read them, all of them and nothing else,
-- and write none, in any table in public: every change goes through the
-- service and its limits (migration 0013). No role a user can reach, nor
-- the service's, may reference a table (migration 0011). Even the service
-- (memory_service) cannot rewrite the turn log or the archive, write the
-- search vocabulary, delete a session or its opening, or touch a job
-- after queueing it, and cannot hand a row to another facilitator.

begin;
\ir setup/two_facilitators.psql

-- Per table: what authenticated reads (two checks of a facilitator's
-- table, one of another), 3 writes as authenticated, REFERENCES for 3
-- roles, A's rows unchanged; then 19 attempts as the service, and the
-- service writing its own row.
select plan((select count(*)::int * 8 + count(*) filter (where per_facilitator)::int + 20
  from pg_temp.public_tables));

create temporary table a_before on commit drop as
  select tbl, pg_temp.digest(tbl, pg_temp.id('a')) as digest from pg_temp.public_tables;

-- Everything signed-in user A may try on A's own rows through the Data
-- API, table by table.
create function pg_temp.write_own_rows(who text) returns setof text
language plpgsql
as $$
declare
  t record;
  mine text;
  owned bigint;
  copy text;
begin
  for t in select * from pg_temp.public_tables order by tbl::text loop
    mine := pg_temp.rows_of(t.tbl, pg_temp.id(who));
    execute format('select count(*) from %s t where %s', t.tbl, mine) into owned;
    copy := pg_temp.insert_copy(t.tbl, pg_temp.id(who));

    perform pg_temp.act_as('authenticated', who);
    if t.per_facilitator then
      return next is(pg_temp.row_count(format('select * from %s t where %s', t.tbl, mine)), owned,
        format('authenticated as %s reads all of its rows in %s', upper(who), t.tbl));
      return next is(pg_temp.row_count(format('select * from %s t where not (%s)', t.tbl, mine)), 0::bigint,
        format('authenticated as %s reads no other rows in %s', upper(who), t.tbl));
    else
      return next pg_temp.refused_or_no_rows(format('select * from %s', t.tbl),
        has_table_privilege('authenticated', t.tbl, 'SELECT'),
        format('authenticated as %s reads the rows of %s', upper(who), t.tbl));
    end if;
    return next throws_ok(copy, '42501', null,
      format('authenticated as %s adds a row to %s: refused', upper(who), t.tbl));
    return next throws_ok(format('update %s set %I = %2$I', t.tbl, pg_temp.update_target(t.tbl)), '42501', null,
      format('authenticated as %s updates its rows in %s: refused', upper(who), t.tbl));
    return next throws_ok(format('delete from %s', t.tbl), '42501', null,
      format('authenticated as %s deletes its rows in %s: refused', upper(who), t.tbl));
    perform pg_temp.act_as_owner();
  end loop;
end
$$;

select * from pg_temp.write_own_rows('a');

-- A table with a foreign key into ours would let its owner probe our keys
-- and hold up our deletes; only the owner may create one.
select ok(not has_table_privilege(r.role, p.tbl, 'REFERENCES'), format('%s may not reference %s', r.role, p.tbl))
from pg_temp.public_tables p
cross join (values ('anon'), ('authenticated'), ('memory_service')) r(role)
order by p.tbl::text, r.role;

-- The service, acting for A, on A's own rows.
select pg_temp.act_as('memory_service', 'a');

select throws_ok($$ update public.conversation_turns set content = 'rewritten' where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A rewrites its turns: refused (the log is append-only)');
select throws_ok($$ delete from public.conversation_turns where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A deletes its turns: refused (the log is append-only)');
select throws_ok($$ update public.conversation_turns set archive_id = null where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A moves its archived turns back to the active segment: refused');

select throws_ok($$ insert into public.conversation_history_archive (facilitator_id, summary, turn_count)
  values (pg_temp.id('b'), 'forged', 1) $$,
  '42501', null, 'memory_service as A adds an archived conversation to B: refused (an import adds only the caller''s own)');
select throws_ok($$ update public.conversation_history_archive set summary = 'rewritten' where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A rewrites its archive: refused');
select throws_ok($$ delete from public.conversation_history_archive where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A deletes its archive: refused');

select throws_ok($$ insert into public.search_vocabulary (facilitator_id, word) values (pg_temp.id('a'), 'planted') $$,
  '42501', null, 'memory_service as A adds a word to its vocabulary: refused (only the turns trigger does)');
select throws_ok($$ update public.search_vocabulary set word = 'rewritten' where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A rewrites its vocabulary: refused');
select throws_ok($$ delete from public.search_vocabulary where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A deletes its vocabulary: refused');

select throws_ok($$ delete from public.mentor_sessions where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A deletes its sessions: refused (sessions end, they are not deleted)');
-- A clear deletes its own conversation's opening (migration 0025), never
-- another's.
select is(pg_temp.row_count($$ delete from public.session_openings where facilitator_id = pg_temp.id('b') $$),
  0::bigint, 'memory_service as A deletes none of B''s openings');

-- It ends only a running job it leased (migration 0042), and A's are not.
select is(pg_temp.row_count($$ update public.memory_jobs set status = 'done', lease_token = null, finished_at = now()
    where facilitator_id = pg_temp.id('a') $$),
  0::bigint, 'memory_service as A marks its job done without a lease: nothing changes');
select throws_ok($$ update public.memory_jobs set run_after = now() + interval '1 year' where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A postpones its job: refused');
select throws_ok($$ delete from public.memory_jobs where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A deletes its job: refused');

-- Row-level security checks the row as written, not only the row found:
-- A's rows cannot be handed to B.
select throws_ok($$ update public.learners set facilitator_id = pg_temp.id('b') where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A hands its learner to B: refused');
select throws_ok($$ update public.conversation_updates set facilitator_id = pg_temp.id('b'), learner_id = null
  where facilitator_id = pg_temp.id('a') and learner_id is not null $$,
  '42501', null, 'memory_service as A hands its conversation to B: refused');
select throws_ok($$ update public.learner_memories set facilitator_id = pg_temp.id('b'), learner_id = null, session_id = null
  where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A hands its memories to B: refused');
select throws_ok($$ update public.mentor_sessions set facilitator_id = pg_temp.id('b'), learner_id = null
  where facilitator_id = pg_temp.id('a') and ended_at is null $$,
  '42501', null, 'memory_service as A hands its live session to B: refused');
select throws_ok($$ update public.session_openings set facilitator_id = pg_temp.id('b')
  where facilitator_id = pg_temp.id('a') $$,
  '42501', null, 'memory_service as A hands its opening to B: refused');

select pg_temp.act_as_owner();
select is(pg_temp.digest(p.tbl, pg_temp.id('a')), a.digest,
  format(case when p.per_facilitator then 'A''s rows in %s unchanged' else 'the rows of %s unchanged' end, p.tbl))
from a_before a join pg_temp.public_tables p using (tbl) order by p.tbl::text;

-- The refusals above are about the statements, not a service that can
-- write nothing: it adds A's learner as a request does.
select pg_temp.act_as('memory_service', 'a');
select lives_ok($$ insert into public.learners (facilitator_id, name) values (pg_temp.id('a'), 'Noor') $$,
  'memory_service as A adds a learner for A');
select pg_temp.act_as_owner();

select * from finish();
rollback;
