-- The findings of the security audit, each as the attack that found it, and
-- what holds today:
--   * a user could empty a table for every tenant (TRUNCATE), or add a
--     trigger that runs their code as whoever writes next: refused on every
--     table, and on a table created after the migrations (migration 0011);
--   * a user could revive an ended session, or rewrite when or why it
--     ended (migration 0012);
--   * a row could hang on another facilitator's learner or session: the
--     foreign keys include the facilitator;
--   * a user could advance a sequence every facilitator shares to its end,
--     and no one could store a turn or queue a job (migration 0013);
--   * the roles a token can reach must not reach auth.users, the service's
--     role or the triggers' SECURITY DEFINER functions, and row-level
--     security must be on for every table in public.

begin;
\ir setup/two_facilitators.psql

select plan((select count(*)::int from pg_temp.public_tables)
  + (select count(*)::int * 3 from pg_proc where pronamespace = 'public'::regnamespace and prosecdef)
  + (select count(*)::int * 6 from pg_class where relnamespace = 'public'::regnamespace and relkind = 'S')
  + 42);

-- TRUNCATE and TRIGGER, on a table the migrating role creates later: the
-- default privileges hold neither for the roles a user can reach, nor
-- REFERENCES.
create table public.pgtap_added_later (id int primary key);

select pg_temp.act_as('authenticated', 'a');
select throws_ok('truncate public.pgtap_added_later', '42501', null,
  'authenticated truncates a table created after the migrations: refused');
select throws_ok('create trigger pgtap_probe before update on public.pgtap_added_later
  for each row execute function suppress_redundant_updates_trigger()', '42501', null,
  'authenticated adds a trigger to a table created after the migrations: refused');
select pg_temp.act_as('anon');
select throws_ok('truncate public.pgtap_added_later', '42501', null,
  'anon truncates a table created after the migrations: refused');
select throws_ok('create trigger pgtap_probe before update on public.pgtap_added_later
  for each row execute function suppress_redundant_updates_trigger()', '42501', null,
  'anon adds a trigger to a table created after the migrations: refused');
select pg_temp.act_as_owner();
select ok(not has_table_privilege('authenticated', 'public.pgtap_added_later', 'REFERENCES'),
  'authenticated may not reference a table created after the migrations');
select ok(not has_table_privilege('anon', 'public.pgtap_added_later', 'REFERENCES'),
  'anon may not reference a table created after the migrations');

-- A trigger would run the user's code as whoever writes next: the service,
-- or the worker as the owner. The user can write such code (a function in
-- their own session's pg_temp) but not hang it on a table, nor put code or
-- tables in public.
select pg_temp.act_as('authenticated', 'a');
select lives_ok($$ create function pg_temp.pgtap_user_code() returns trigger language plpgsql
  as 'begin return new; end' $$, 'authenticated writes a trigger function of its own, in pg_temp');
select throws_ok($$ create trigger pgtap_probe before insert on public.learner_memories
  for each row execute function pg_temp.pgtap_user_code() $$, '42501', null,
  'authenticated hangs its function on learner_memories: refused');
select throws_ok($$ create function public.pgtap_user_code() returns trigger language plpgsql
  as 'begin return new; end' $$, '42501', null, 'authenticated creates a function in public: refused');
select throws_ok('create table public.pgtap_user_table (id int)', '42501', null,
  'authenticated creates a table in public: refused');
select pg_temp.act_as('memory_service', 'a');
select throws_ok($$ create trigger pgtap_probe before insert on public.learner_memories
  for each row execute function pg_temp.pgtap_user_code() $$, '42501', null,
  'memory_service hangs a function on learner_memories: refused');
select pg_temp.act_as_owner();

-- An ended session stays ended. The Data API cannot update a session at
-- all; the service's role can grow its closing state, as memories learnt
-- from its last exchange arrive, but not revive it.
select pg_temp.act_as('authenticated', 'a');
select throws_ok($$ update public.mentor_sessions set ended_at = null, end_reason = null
  where facilitator_id = pg_temp.id('a') and id = pg_temp.id('a_ended_session') $$,
  '42501', null, 'authenticated as A revives its ended session: refused');
select pg_temp.act_as('memory_service', 'a');
select throws_ok($$ update public.mentor_sessions set ended_at = null, end_reason = null
  where facilitator_id = pg_temp.id('a') and id = pg_temp.id('a_ended_session') $$,
  '23514', null, 'memory_service as A revives its ended session: refused');
select throws_ok($$ update public.mentor_sessions set ended_at = now() - interval '1 day'
  where facilitator_id = pg_temp.id('a') and id = pg_temp.id('a_ended_session') $$,
  '23514', null, 'memory_service as A moves when its session ended: refused');
select throws_ok($$ update public.mentor_sessions set end_reason = 'idle'
  where facilitator_id = pg_temp.id('a') and id = pg_temp.id('a_ended_session') $$,
  '23514', null, 'memory_service as A changes why its session ended: refused');
select is(pg_temp.row_count($$ update public.mentor_sessions
  set closing = closing || '{"new_memories": ["Emma likes maps"]}'
  where facilitator_id = pg_temp.id('a') and id = pg_temp.id('a_ended_session') $$),
  1::bigint, 'memory_service as A adds a learnt memory to its ended session''s closing state');
select pg_temp.act_as_owner();
select is((select end_reason from public.mentor_sessions where id = pg_temp.id('a_ended_session')),
  'ended', 'A''s ended session is still ended, for the reason it ended');

-- Every key that names a learner or a session includes the facilitator,
-- so a row of A's cannot hang on B's learner or session, even written by
-- the service's role, which may write A's rows.
select pg_temp.act_as('memory_service', 'a');
select throws_ok($$ insert into public.conversation_updates (facilitator_id, learner_id)
  values (pg_temp.id('a'), pg_temp.id('b_learner')) $$,
  '23503', null, 'memory_service as A starts a conversation about B''s learner: refused');
select throws_ok($$ insert into public.conversation_turns (facilitator_id, learner_id, role, content)
  values (pg_temp.id('a'), pg_temp.id('b_learner'), 'user', 'How is Max?') $$,
  '23503', null, 'memory_service as A stores a turn about B''s learner: refused');
select throws_ok($$ insert into public.learner_memories (facilitator_id, learner_id, type, content, importance, confidence, source)
  values (pg_temp.id('a'), pg_temp.id('b_learner'), 'personal', 'Max has a dog', 0.5, 0.5, 'added') $$,
  '23503', null, 'memory_service as A stores a memory about B''s learner: refused');
select throws_ok($$ insert into public.learner_memories (facilitator_id, learner_id, type, content, importance, confidence, source, session_id)
  values (pg_temp.id('a'), null, 'context', 'Learnt in B''s session', 0.5, 0.5, 'extracted', pg_temp.id('b_session')) $$,
  '23503', null, 'memory_service as A stores a memory learnt in B''s session: refused');
select throws_ok($$ update public.learner_memories set learner_id = pg_temp.id('b_learner')
  where facilitator_id = pg_temp.id('a') $$,
  '23503', null, 'memory_service as A moves its memories to B''s learner: refused');
select throws_ok($$ insert into public.mentor_sessions (facilitator_id, learner_id)
  values (pg_temp.id('a'), pg_temp.id('b_learner')) $$,
  '23503', null, 'memory_service as A starts a session about B''s learner: refused');
select throws_ok($$ insert into public.session_openings (facilitator_id, learner_id, session_id, opening)
  values (pg_temp.id('a'), pg_temp.id('a_learner'), pg_temp.id('b_session'), '{}') $$,
  '23503', null, 'memory_service as A builds an opening from B''s session: refused');
select throws_ok($$ insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key)
  values (pg_temp.id('a'), pg_temp.id('b_learner'), 'extract', 'pgtap') $$,
  '23503', null, 'memory_service as A queues a job about B''s learner: refused');
select pg_temp.act_as_owner();

-- The identity sequences of the turn log and the jobs are shared by every
-- facilitator. With UPDATE a user could setval() one to its end, and no
-- one could store a turn again, or back, and everyone's new turns would
-- sort before their old ones; with USAGE, advance it one nextval() at a
-- time. Only the catalog is read: a sequence changed by an attempt would
-- stay changed, as no rollback undoes it.
select ok(not has_sequence_privilege(r.role, c.oid, p.privilege),
  format('%s holds no %s on %s', r.role, p.privilege, c.oid::regclass))
from pg_class c
cross join (values ('anon'), ('authenticated')) r(role)
cross join (values ('USAGE'), ('SELECT'), ('UPDATE')) p(privilege)
where c.relnamespace = 'public'::regnamespace and c.relkind = 'S'
order by c.oid::regclass::text, r.role, p.privilege;

-- Supabase Auth's users are its own.
select pg_temp.act_as('authenticated', 'a');
select throws_ok('select * from auth.users', '42501', null, 'authenticated reads auth.users: refused');
select pg_temp.act_as('memory_service', 'a');
select throws_ok('select * from auth.users', '42501', null, 'memory_service reads auth.users: refused');
select pg_temp.act_as('anon');
select throws_ok('select * from auth.users', '42501', null, 'anon reads auth.users: refused');
select pg_temp.act_as_owner();

-- The service's role is out of every token's reach: PostgREST switches
-- only to roles its login role, authenticator, is a member of. No role a
-- request can run as passes by row-level security.
create function pg_temp.out_of_tokens_reach(target name) returns setof text
language sql
as $$
  select ok(not pg_has_role('anon', target, 'member'), format('anon is not a member of %s', target))
  union all
  select ok(not pg_has_role('authenticated', target, 'member'), format('authenticated is not a member of %s', target))
  union all
  select case when exists (select from pg_roles where rolname = 'authenticator')
    then ok(not pg_has_role('authenticator', target, 'member'),
      format('authenticator (PostgREST) cannot switch to %s', target))
    else skip('no role authenticator here (not a Supabase database)', 1) end;
$$;
select pg_temp.out_of_tokens_reach('memory_service');
select is((select count(*)::int from pg_roles
    where rolname in ('anon', 'authenticated', 'memory_service') and not rolsuper and not rolbypassrls),
  3, 'anon, authenticated and memory_service exist, and none is a superuser or bypasses row-level security');

-- Every table in public has row-level security on.
select ok((select relrowsecurity from pg_class where oid = tbl), format('row-level security is on for %s', tbl))
from pg_temp.public_tables order by tbl::text;

-- The triggers' SECURITY DEFINER functions run as the owner: no role a
-- user can reach may call them, and none of them looks its names up in a
-- schema a caller could write to.
select ok(not has_function_privilege(r.role, p.oid, 'EXECUTE'), format('%s may not call %s', r.role, p.oid::regprocedure))
from pg_proc p
cross join (values ('anon'), ('authenticated')) r(role)
where p.pronamespace = 'public'::regnamespace and p.prosecdef
order by p.oid::regprocedure::text, r.role;
select ok(exists (select from unnest(p.proconfig) c where c like 'search_path=%'),
  format('%s pins its search_path', p.oid::regprocedure))
from pg_proc p
where p.pronamespace = 'public'::regnamespace and p.prosecdef
order by p.oid::regprocedure::text;

-- The worker's role (migration 0018) keeps the queue's books across
-- facilitators and nothing else: out of every token's reach, no superuser,
-- not the owner, and refused whatever a job's work reads or writes (that
-- runs as the job's facilitator, as memory_service).
select pg_temp.out_of_tokens_reach('memory_worker');
select ok(exists (select from pg_roles where rolname = 'memory_worker' and not rolsuper and not rolbypassrls)
    and not pg_has_role('memory_worker', (select relowner from pg_class where oid = 'public.memory_jobs'::regclass), 'usage'),
  'memory_worker is no superuser, bypasses no row-level security and does not own the queue');
-- pgTAP's own functions, for the role under test (rolled back with the rest).
do $$ begin
  execute format('grant usage on schema %I to memory_worker',
    (select extnamespace::regnamespace::text from pg_extension where extname = 'pgtap'));
end $$;
select pg_temp.act_as('memory_worker');
select throws_ok('select content from public.learner_memories', '42501', null, 'memory_worker reads memories: refused');
select throws_ok('select content from public.conversation_turns', '42501', null, 'memory_worker reads turns: refused');
select throws_ok('select last_message from public.mentor_sessions', '42501', null, 'memory_worker reads what a session said: refused');
select throws_ok($$insert into public.memory_jobs (facilitator_id, kind, dedupe_key) values ('$$ || pg_temp.id('a') || $$', 'extract', 'forged')$$,
  '42501', null, 'memory_worker queues a job: refused');
select throws_ok($$update public.memory_jobs set payload = '{}'$$, '42501', null, 'memory_worker rewrites a job''s payload: refused');
select throws_ok('truncate public.memory_jobs', '42501', null, 'memory_worker empties the queue: refused');
select pg_temp.act_as_owner();

select * from finish();
rollback;
