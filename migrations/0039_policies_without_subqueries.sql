-- Row-level policies compare facilitator_id with auth.uid() directly,
-- without the sub-select (select auth.uid()). Citus, which distributes the
-- tables by facilitator_id (`server migrate --citus`), refuses policies
-- with a sub-select on a distributed table; the plain comparison is what
-- it copies to every shard.
--
-- The sub-select was there so that Postgres computes auth.uid() once per
-- statement (an initPlan) instead of once per row, and auth.uid() parses
-- the caller's claims, about 20 µs for a Supabase token. Written with the
-- column first, the plain comparison is computed once per statement too
-- wherever it counts:
--   - the service's statements all filter on facilitator_id = $1, so
--     Postgres folds the policy into a one-time check of auth.uid() = $1;
--   - a read through Supabase's Data API, which has no such filter, finds
--     the caller's rows by an index on facilitator_id, whose condition is
--     computed once per scan (an index, an index-only or a bitmap scan);
--     written value first, a bitmap scan checked it again on every row;
--   - a write's check runs on every row it writes, and the service sets
--     request.jwt.claim.sub beside request.jwt.claims, which auth.uid()
--     reads first, so that check reads a setting instead of parsing JSON.
-- Measured on 20,000 turns and 3,000 archived conversations (EXPLAIN
-- ANALYZE, generic plans): the service's reads and the Data API's index
-- scans take the same time either way; writing 5,000 rows as the service
-- took 121-161 ms with the sub-select and 132 ms without it.
--
-- Every policy on a table of the memory's (a table of public with a
-- facilitator_id, as erasure counts them, migration 0026) is rewritten
-- from the catalog, so those of migrations applied in between are too.
do $$
declare
  p record;
  using_expr text;
  check_expr text;
begin
  for p in
    select pol.polname, pol.polrelid::regclass as tbl,
      pg_get_expr(pol.polqual, pol.polrelid) as using_expr,
      pg_get_expr(pol.polwithcheck, pol.polrelid) as check_expr
    from pg_policy pol
    join pg_class c on c.oid = pol.polrelid
    where c.relnamespace = 'public'::regnamespace
      and exists (select 1 from pg_attribute a
        where a.attrelid = c.oid and a.attname = 'facilitator_id' and a.attnum > 0 and not a.attisdropped)
  loop
    using_expr := replace(replace(p.using_expr,
      '( SELECT auth.uid() AS uid) = facilitator_id', 'facilitator_id = auth.uid()'),
      '( SELECT auth.uid() AS uid)', 'auth.uid()');
    check_expr := replace(replace(p.check_expr,
      '( SELECT auth.uid() AS uid) = facilitator_id', 'facilitator_id = auth.uid()'),
      '( SELECT auth.uid() AS uid)', 'auth.uid()');
    if using_expr is distinct from p.using_expr then
      execute format('alter policy %I on %s using (%s)', p.polname, p.tbl, using_expr);
    end if;
    if check_expr is distinct from p.check_expr then
      execute format('alter policy %I on %s with check (%s)', p.polname, p.tbl, check_expr);
    end if;
  end loop;
end
$$;
