-- Gaps in the database's guard that no migration closes yet, as tests
-- marked TODO: pg_prove lists them, and says when one starts passing,
-- without failing the run. When a migration closes a gap, move its tests
-- out of the TODO, beside the others of their kind.

begin;
\ir setup/two_facilitators.psql

select plan(11);

-- What the migrating role creates later gets Supabase's default
-- privileges: a table, every write for anon and authenticated (migration
-- 0013 revoked them on today's tables only; row-level security, if the
-- new table has it, is then the only guard); a sequence, USAGE and UPDATE
-- for them, so a user could advance it to its end (0013 revoked them on
-- today's sequences only); a function, EXECUTE for anon and authenticated,
-- so a SECURITY DEFINER function added later is callable through the Data
-- API's /rpc until its migration revokes it.
create table public.pgtap_added_later (id int primary key);
create sequence public.pgtap_added_later_seq;
create function public.pgtap_added_later_fn() returns int language sql as 'select 1';

select todo('alter default privileges in schema public: no writes on tables for anon and authenticated, nothing on sequences, no execute on functions', 11);
select ok(not has_table_privilege(r.role, 'public.pgtap_added_later', p.privilege),
  format('%s holds no %s on a table created after the migrations', r.role, p.privilege))
from (values ('anon'), ('authenticated')) r(role)
cross join (values ('INSERT'), ('UPDATE'), ('DELETE')) p(privilege)
order by r.role, p.privilege;
select ok(not has_table_privilege('anon', 'public.pgtap_added_later', 'SELECT'),
  'anon holds no SELECT on a table created after the migrations');
select ok(not has_sequence_privilege(r.role, 'public.pgtap_added_later_seq', 'UPDATE'),
  format('%s holds no UPDATE on a sequence created after the migrations', r.role))
from (values ('anon'), ('authenticated')) r(role)
order by r.role;
select ok(not has_function_privilege(r.role, 'public.pgtap_added_later_fn()', 'EXECUTE'),
  format('%s may not call a function created after the migrations', r.role))
from (values ('anon'), ('authenticated')) r(role)
order by r.role;

select * from finish();
rollback;
