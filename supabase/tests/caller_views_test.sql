-- The views the service reads through where row-level security would keep
-- the planner from an index (migrations 0038, 0058, 0059): each is owned
-- by the tables' owner and filters by the caller as the policies do. Every
-- view of schema private, today's and any added later, shows the service's
-- role the caller's own rows and no one else's, and refuses the Data API's
-- roles, signed in or not.

begin;
\ir setup/two_facilitators.psql

create temporary table caller_views on commit drop as
  select format('%I.%I', schemaname, viewname) as view from pg_views where schemaname = 'private';
grant select on caller_views to public;

select plan((select 4 * count(*)::int from caller_views));

select pg_temp.act_as('authenticated', 'a');
select throws_ok(format('select count(*) from %s', view), '42501', null,
    format('authenticated as A reads %s: refused', view))
  from caller_views order by view;

select pg_temp.act_as('anon');
select throws_ok(format('select count(*) from %s', view), '42501', null, format('anon reads %s: refused', view))
  from caller_views order by view;

select pg_temp.act_as('memory_service', 'a');
select is(pg_temp.row_count(format('select 1 from %s where facilitator_id is distinct from %L', view, pg_temp.id('a'))),
    0::bigint, format('memory_service as A reads no one else''s rows through %s', view))
  from caller_views order by view;
select cmp_ok(pg_temp.row_count(format('select 1 from %s', view)), '>', 0::bigint,
    format('memory_service as A reads its own rows through %s', view))
  from caller_views order by view;

select * from finish();
rollback;
