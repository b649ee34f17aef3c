-- Migration 0026_erase_every_table of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0026_erase_every_table.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0026_erase_every_table') then
      raise exception 'migration 0026_erase_every_table was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000026; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Erasure covers every table kept per facilitator, today's and any added
-- later, instead of a list that a new table can be missing from (the
-- pending actions and the settings were): the tables whose order matters
-- go first, by name; then every other table of public with a
-- facilitator_id, found in the catalog. A table with a learner_id is
-- erased for a learner or the account; one without, for the account only.
-- The usage counters alone stay: they hold counts, not content, and
-- erasing must not hand back a day's spent budget (deleting the user in
-- Supabase Auth removes them too).
create or replace function public.erase(p_scope text, p_learner_id uuid) returns jsonb
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  -- The turn log goes before the active record, whose delete trigger would
  -- otherwise archive its turns again; the history before its memories and
  -- the openings before their sessions, so that each count is the table's
  -- own rows, not what a cascade took with it.
  ordered text[] := array['conversation_turns', 'conversation_history_archive', 'conversation_updates',
    'memory_history', 'learner_memories', 'memory_jobs', 'consolidation_runs', 'session_openings',
    'mentor_sessions', 'learner_profiles'];
  -- Erased on their own terms below, or kept.
  apart text[] := array['learners', 'erasure_receipts', 'search_vocabulary', 'usage_counters'];
  tables text[];
  per_learner boolean;
  tbl text;
  n bigint;
  removed jsonb := '{}';
  erased_at timestamptz := now();
begin
  if me is null then
    raise exception 'erase acts for a signed-in user' using errcode = '42501';
  end if;
  if p_scope = 'learner' and p_learner_id is not null then
    perform 1 from public.learners where facilitator_id = me and id = p_learner_id for update;
    if not found then
      raise exception 'no learner % of the caller', p_learner_id using errcode = 'P0002';
    end if;
  elsif p_scope = 'account' and p_learner_id is null then
    perform 1 from public.learners where facilitator_id = me for update;
  else
    raise exception 'erase takes scope learner with a learner, or account without one' using errcode = '22023';
  end if;

  -- The words only this learner's turns contributed (all, for the account).
  delete from public.search_vocabulary v
  where v.facilitator_id = me
    and (p_learner_id is null or v.word in (
      select w.word from public.conversation_turns t
      cross join lateral unnest(tsvector_to_array(to_tsvector('simple', t.content))) as w(word)
      where t.facilitator_id = me and t.learner_id = p_learner_id
      except
      select w.word from public.conversation_turns t
      cross join lateral unnest(tsvector_to_array(to_tsvector('simple', t.content))) as w(word)
      where t.facilitator_id = me and t.learner_id is distinct from p_learner_id));
  get diagnostics n = row_count;
  removed := removed || jsonb_build_object('search_vocabulary', n);

  select ordered || coalesce(array_agg(c.relname::text order by c.relname), '{}') into tables
  from pg_catalog.pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
    and c.relname <> all (ordered || apart)
    and exists (select 1 from pg_catalog.pg_attribute a
      where a.attrelid = c.oid and a.attname = 'facilitator_id' and a.attnum > 0 and not a.attisdropped);

  foreach tbl in array tables loop
    select exists (select 1 from pg_catalog.pg_attribute a
      where a.attrelid = ('public.' || quote_ident(tbl))::regclass and a.attname = 'learner_id'
        and a.attnum > 0 and not a.attisdropped) into per_learner;
    if per_learner then
      execute format('delete from public.%I where facilitator_id = $1 and ($2::uuid is null or learner_id = $2)', tbl)
        using me, p_learner_id;
    elsif p_scope = 'account' then
      execute format('delete from public.%I where facilitator_id = $1', tbl) using me;
    else
      continue;
    end if;
    get diagnostics n = row_count;
    removed := removed || jsonb_build_object(tbl, n);
  end loop;

  if p_scope = 'account' then
    delete from public.erasure_receipts where facilitator_id = me;
    get diagnostics n = row_count;
    removed := removed || jsonb_build_object('erasure_receipts', n);
  end if;

  delete from public.learners where facilitator_id = me and (p_learner_id is null or id = p_learner_id);
  get diagnostics n = row_count;
  removed := removed || jsonb_build_object('learners', n);

  if p_scope = 'learner' then
    insert into public.erasure_receipts (facilitator_id, learner_id, erased_at, removed)
    values (me, p_learner_id, erased_at, removed);
  end if;
  return jsonb_build_object('facilitator_id', me, 'scope', p_scope, 'learner_id', p_learner_id,
    'erased_at', erased_at, 'removed', removed);
end
$$;

revoke execute on function public.erase(text, uuid) from public, anon, authenticated;
grant execute on function public.erase(text, uuid) to memory_service;

insert into public.memory_migrations (version) values ('0026_erase_every_table');
