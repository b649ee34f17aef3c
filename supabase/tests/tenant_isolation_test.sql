-- No one reaches another facilitator's rows. Facilitator A attacks B's rows
-- in every table in public (read from the catalog, so a table added later
-- is attacked too) with every statement: select, insert, update, delete
-- (of B's rows, and of every row A reaches), truncate and create trigger.
-- A attacks as Supabase's Data API runs a signed-in user's request (role
-- authenticated with A's claims) and as the service runs A's request (role
-- memory_service with A's claims); the anon key attacks with no claims.
-- Each attempt is refused (42501) or touches no row of B's, and B's rows,
-- compared as the owner before and after, are unchanged.

begin;
\ir setup/two_facilitators.psql

-- Per table: the fixture's check, 3 attackers times 8 statements, and B's
-- rows unchanged.
select plan((select count(*)::int * 26 from pg_temp.public_tables));

create temporary table b_before on commit drop as
  select tbl, pg_temp.digest(tbl, pg_temp.id('b')) as digest from pg_temp.public_tables;

-- Without rows of B's in a table every attempt would pass for nothing: a
-- table added later needs rows in setup/two_facilitators.psql.
select ok(digest not like '0 rows%', format('fixture: B has rows in %s', tbl))
from b_before order by tbl::text;

-- Every attempt of attacker_role (with attacker's claims, or none) on
-- victim's rows, table by table. Each statement is built as the owner, who
-- may read the victim's row that an insert copies.
create function pg_temp.attack(attacker_role text, attacker text, victim text) returns setof text
language plpgsql
as $$
declare
  t record;
  who text := attacker_role || coalesce(' as ' || upper(attacker), '');
  victims text;
  whose text;
  added text;
  target name;
  new_value text;
  rewrites text;
  copy text;
  own bigint;
begin
  for t in select * from pg_temp.public_tables order by tbl::text loop
    victims := pg_temp.rows_of(t.tbl, pg_temp.id(victim));
    target := pg_temp.update_target(t.tbl);
    if t.per_facilitator then
      whose := format('%s''s rows in %s', upper(victim), t.tbl);
      added := format('a row for %s to %s', upper(victim), t.tbl);
      -- The update tries to take the rows over.
      new_value := coalesce(quote_literal(pg_temp.id(attacker)), 'facilitator_id');
      rewrites := 'takes over';
    else
      -- A table kept for nobody in particular: all its rows are another's,
      -- and the update writes a column back as it is.
      whose := format('the rows of %s', t.tbl);
      added := format('a row to %s', t.tbl);
      new_value := quote_ident(target);
      rewrites := 'rewrites';
    end if;
    copy := pg_temp.insert_copy(t.tbl, pg_temp.id(victim));
    own := 0;
    if t.per_facilitator and attacker is not null then
      execute format('select count(*) from %s t where %s', t.tbl, pg_temp.rows_of(t.tbl, pg_temp.id(attacker))) into own;
    end if;

    perform pg_temp.act_as(attacker_role, attacker);
    return next pg_temp.refused_or_no_rows(format('select * from %s t where %s', t.tbl, victims),
      has_table_privilege(attacker_role, t.tbl, 'SELECT'), format('%s reads %s', who, whose));
    -- Refused whatever the privileges: an insert the role may make is
    -- refused by row-level security, as the row is another's.
    return next throws_ok(copy, '42501', null, format('%s adds %s: refused', who, added));
    return next pg_temp.refused_or_no_rows(
      format('update %s t set %I = %s where %s', t.tbl, target, new_value, victims),
      has_column_privilege(attacker_role, t.tbl, target, 'UPDATE'), format('%s %s %s', who, rewrites, whose));
    return next pg_temp.refused_or_no_rows(format('delete from %s t where %s', t.tbl, victims),
      has_table_privilege(attacker_role, t.tbl, 'DELETE'), format('%s deletes %s', who, whose));
    -- With no WHERE clause only the UPDATE or DELETE policy bounds the
    -- statement: it may touch the attacker's own rows, and no other. (It
    -- does, and the attacker's rows are gone from here on in this table.)
    return next pg_temp.refused_or_own_rows(format('update %s set %I = %s', t.tbl, target, new_value),
      has_column_privilege(attacker_role, t.tbl, target, 'UPDATE'), own,
      format('%s updates every row it reaches in %s', who, t.tbl));
    return next pg_temp.refused_or_own_rows(format('delete from %s', t.tbl),
      has_table_privilege(attacker_role, t.tbl, 'DELETE'), own,
      format('%s deletes every row it reaches in %s', who, t.tbl));
    return next throws_ok(format('truncate %s', t.tbl), '42501', null,
      format('%s truncates %s: refused', who, t.tbl));
    return next throws_ok(
      format('create trigger pgtap_probe before update on %s for each row execute function suppress_redundant_updates_trigger()', t.tbl),
      '42501', null, format('%s adds a trigger to %s: refused', who, t.tbl));
    perform pg_temp.act_as_owner();
  end loop;
end
$$;

select * from pg_temp.attack('authenticated', 'a', 'b');
select * from pg_temp.attack('memory_service', 'a', 'b');
select * from pg_temp.attack('anon', null, 'b');

select is(pg_temp.digest(p.tbl, pg_temp.id('b')), b.digest,
  format(case when p.per_facilitator then 'B''s rows in %s unchanged' else 'the rows of %s unchanged' end, p.tbl))
from b_before b join pg_temp.public_tables p using (tbl) order by p.tbl::text;

select * from finish();
rollback;
