-- Gaps in the database's guard that no migration closes yet, as tests
-- marked TODO: pg_prove lists them, and says when one starts passing,
-- without failing the run. When a migration closes a gap, drop its todo().
-- Only the catalog is read here: the attacks themselves would change a
-- sequence, which no rollback undoes.

begin;
\ir setup/two_facilitators.psql

create temporary table public_sequences on commit drop as
  select c.oid::regclass as seq from pg_class c where c.relkind = 'S' and c.relnamespace = 'public'::regnamespace;

select plan((select count(*)::int * 4 from pg_temp.public_sequences) + 11);

-- The identity sequences of the turn log and the jobs are shared by every
-- facilitator, and Supabase's default privileges give anon and
-- authenticated USAGE and UPDATE on them. A signed-in user with SQL can
-- setval() the turn log's sequence to its maximum, and no one can store a
-- turn again, or back, and everyone's new turns sort before their old
-- ones. Identity columns need no privilege on their sequence, so the
-- service needs none of these.
select todo('revoke all on the identity sequences from anon and authenticated',
  (select count(*)::int * 4 from pg_temp.public_sequences));
select ok(not has_sequence_privilege(r.role, s.seq, p.privilege),
  format('%s holds no %s on %s', r.role, p.privilege, s.seq))
from pg_temp.public_sequences s
cross join (values ('anon'), ('authenticated')) r(role)
cross join (values ('USAGE'), ('UPDATE')) p(privilege)
order by s.seq::text, r.role, p.privilege;

-- What the migrating role creates later gets Supabase's default
-- privileges: a table, every write for anon and authenticated (migration
-- 0013 revoked them on today's tables only; row-level security, if the
-- new table has it, is then the only guard); a sequence, the above; a
-- function, EXECUTE for anon and authenticated, so a SECURITY DEFINER
-- function added later is callable through the Data API's /rpc until its
-- migration revokes it.
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
