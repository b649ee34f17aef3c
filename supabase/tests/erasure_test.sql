-- Erasure (migration 0023). Only the service's role may call public.erase,
-- and only for its caller's own learner; the receipts are read by their
-- facilitator and written by nobody but public.erase. Erasing a learner,
-- an account, or the user in Supabase Auth leaves no row of what it erased
-- in any table in public, today's or any added later, and leaves the
-- other facilitator's rows as they were.

begin;
\ir setup/two_facilitators.psql

select plan(32 + (select count(*)::int from pg_temp.public_tables where per_facilitator));

-- A's and B's rows, table by table, as the owner reads them.
create function pg_temp.digests(who text) returns text
language sql
as $$
  select string_agg(format('%s: %s', tbl, pg_temp.digest(tbl, pg_temp.id(who))), E'\n' order by tbl::text)
  from pg_temp.public_tables
$$;

-- The tables still holding rows of the facilitator (with learner: of
-- that learner), apart from those named in except.
create function pg_temp.tables_with_rows(who text, learner uuid default null, except_tables regclass[] default '{}')
returns text[]
language plpgsql
as $$
declare
  t record;
  found text[] := '{}';
  n bigint;
begin
  for t in select * from pg_temp.public_tables where per_facilitator order by tbl::text loop
    continue when t.tbl = any(except_tables);
    if learner is null then
      execute format('select count(*) from %s t where t.facilitator_id = $1', t.tbl) into n using pg_temp.id(who);
    elsif exists (select from pg_attribute where attrelid = t.tbl and attname = 'learner_id' and not attisdropped)
        and t.tbl <> 'public.erasure_receipts'::regclass then
      execute format('select count(*) from %s t where t.facilitator_id = $1 and t.learner_id = $2', t.tbl)
        into n using pg_temp.id(who), learner;
    else
      continue;
    end if;
    if n > 0 then
      found := found || t.tbl::text;
    end if;
  end loop;
  return found;
end
$$;

create temporary table before on commit drop as
  select pg_temp.digests('a') as a, pg_temp.digests('b') as b;

-- Who may call it.
select ok(not has_function_privilege('anon', 'public.erase(text, uuid)', 'EXECUTE'), 'anon may not call erase');
select ok(not has_function_privilege('authenticated', 'public.erase(text, uuid)', 'EXECUTE'),
  'authenticated may not call erase (changes go through the service, migration 0013)');
select ok(has_function_privilege('memory_service', 'public.erase(text, uuid)', 'EXECUTE'), 'memory_service may call erase');
select ok((select prosecdef and proconfig @> array['search_path=""'] from pg_proc where oid = 'public.erase(text, uuid)'::regprocedure),
  'erase runs as its owner with an empty search_path');

select pg_temp.act_as('authenticated', 'b');
select throws_ok(format('select public.erase(%L, %L)', 'learner', pg_temp.id('a_learner')), '42501', null,
  'authenticated as B erases A''s learner: refused');
select throws_ok(format('select public.erase(%L, %L)', 'learner', pg_temp.id('b_learner')), '42501', null,
  'authenticated as B erases its own learner through the Data API: refused');
select throws_ok($$select public.erase('account', null)$$, '42501', null,
  'authenticated as B erases its account through the Data API: refused');
select pg_temp.act_as('anon');
select throws_ok(format('select public.erase(%L, %L)', 'learner', pg_temp.id('a_learner')), '42501', null,
  'anon erases A''s learner: refused');

-- The service, for B, on A's learner: as if it did not exist.
select pg_temp.act_as('memory_service', 'b');
select throws_ok(format('select public.erase(%L, %L)', 'learner', pg_temp.id('a_learner')), 'P0002', null,
  'memory_service as B erases A''s learner: refused as not found');
select throws_ok(format('select public.erase(%L, %L)', 'learner', gen_random_uuid()), 'P0002', null,
  'memory_service as B erases a learner that does not exist: refused as not found');
select throws_ok(format('select public.erase(%L, %L)', 'account', pg_temp.id('a_learner')), '22023', null,
  'an account erasure naming a learner: refused');
select throws_ok($$select public.erase('learner', null)$$, '22023', null, 'a learner erasure naming no learner: refused');
select throws_ok($$select public.erase('everything', null)$$, '22023', null, 'an unknown scope: refused');
-- Without a caller there is nobody to erase for.
select set_config('request.jwt.claims', '{"role": "authenticated"}', true);
select throws_ok($$select public.erase('account', null)$$, '42501', null, 'memory_service without a caller: refused');
select pg_temp.act_as_owner();
select is(pg_temp.digests('a'), (select a from before), 'A''s rows unchanged by the refused erasures');

-- Receipts: read by their facilitator, written by nobody.
select pg_temp.act_as('authenticated', 'a');
select is((select count(*)::int from public.erasure_receipts), 1, 'A reads its own receipt');
select is((select count(*)::int from public.erasure_receipts where facilitator_id <> pg_temp.id('a')), 0, 'A reads no other receipt');
select throws_ok(format($$insert into public.erasure_receipts (facilitator_id, learner_id, removed)
  values (%L, gen_random_uuid(), '{}')$$, pg_temp.id('a')), '42501', null, 'authenticated as A writes a receipt: refused');
select throws_ok($$update public.erasure_receipts set removed = '{}'$$, '42501', null, 'authenticated as A changes its receipt: refused');
select throws_ok($$delete from public.erasure_receipts$$, '42501', null, 'authenticated as A deletes its receipt: refused');
select pg_temp.act_as('memory_service', 'a');
select throws_ok(format($$insert into public.erasure_receipts (facilitator_id, learner_id, removed)
  values (%L, gen_random_uuid(), '{}')$$, pg_temp.id('a')), '42501', null, 'memory_service as A forges a receipt: refused');
select throws_ok($$delete from public.erasure_receipts$$, '42501', null, 'memory_service as A deletes its receipt: refused');
select pg_temp.act_as_owner();

-- Every table kept per facilitator goes with the user in Supabase Auth.
select ok(exists (
    select from pg_constraint c
    where c.conrelid = t.tbl and c.contype = 'f' and c.confrelid = 'auth.users'::regclass and c.confdeltype = 'c'
      and c.conkey = array[(select attnum from pg_attribute where attrelid = t.tbl and attname = 'facilitator_id')]),
  format('%s.facilitator_id references auth.users on delete cascade', t.tbl))
from pg_temp.public_tables t where t.per_facilitator order by t.tbl::text;

-- A erases Emma, whose word "fractions" A's general conversation also uses.
select pg_temp.act_as('memory_service', 'a');
insert into public.conversation_turns (facilitator_id, learner_id, role, content)
values (pg_temp.id('a'), null, 'user', 'Fractions came up at dinner too.');
select pg_temp.act_as_owner();
create temporary table receipt (r jsonb) on commit drop;
grant insert on receipt to public;
select pg_temp.act_as('memory_service', 'a');
insert into receipt select public.erase('learner', pg_temp.id('a_learner'));
select pg_temp.act_as_owner();
select is((select r->>'scope' from receipt), 'learner', 'the receipt names its scope');
select is((select (r->'removed'->>'conversation_turns')::int from receipt), 4, 'the receipt counts the learner''s turns');
select is(pg_temp.tables_with_rows('a', pg_temp.id('a_learner')), '{}'::text[], 'no row of Emma''s is left in any table');
select is((select count(*)::int from public.learners where id = pg_temp.id('a_learner')), 0, 'Emma is gone');
select ok(not exists (select from public.search_vocabulary where facilitator_id = pg_temp.id('a') and word in ('decimals', 'pizza', 'emma')),
  'the words only Emma''s conversations used are gone from the vocabulary');
select ok(exists (select from public.search_vocabulary where facilitator_id = pg_temp.id('a') and word = 'fractions')
    and exists (select from public.search_vocabulary where facilitator_id = pg_temp.id('a') and word = 'homework'),
  'the words A''s other conversations use stay');
select is((select count(*)::int from public.erasure_receipts where facilitator_id = pg_temp.id('a')), 2, 'A has a new receipt');
select is(pg_temp.digests('b'), (select b from before), 'B''s rows unchanged by the erasure of A''s learner');

-- A erases the account: nothing of A's is left but the quota counters.
select pg_temp.act_as('memory_service', 'a');
select public.erase('account', null);
select pg_temp.act_as_owner();
select is(pg_temp.tables_with_rows('a', null, array['public.usage_counters'::regclass]), '{}'::text[],
  'no row of A''s is left in any table after erasing the account, receipts included');

-- B is deleted in Supabase Auth: nothing of B's is left at all.
delete from auth.users where id = pg_temp.id('b');
select is(pg_temp.tables_with_rows('b'), '{}'::text[], 'no row of B''s is left in any table after deleting the user');

select * from finish();
rollback;
