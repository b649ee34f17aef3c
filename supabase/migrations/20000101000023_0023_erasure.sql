-- Migration 0023_erasure of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0023_erasure.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0023_erasure') then
      raise exception 'migration 0023_erasure was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000023; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Erasure that leaves no trace. A facilitator may erase a learner, or
-- everything of their own (their account's data), and nothing derived from
-- what was said stays behind: turns, archived conversations, the active
-- record, memories and their history, embeddings, jobs with their payloads
-- and errors, consolidation runs, sessions, openings, the profile, and the
-- search-vocabulary words only that learner's conversations contributed.
--
-- The turn log and the archive stay append-only for every role a request
-- runs as: erasure is not a delete a caller makes, it is public.erase,
-- which runs as the owner, checks that the learner is the caller's, and
-- leaves a receipt. Deleting the user in Supabase Auth (delete from
-- auth.users) removes everything too: every table kept per facilitator
-- references auth.users on delete cascade, the vocabulary and the jobs
-- included (a database test checks that for every table, today's and any
-- added later).

-- A receipt of an erased learner: who erased, which learner, when, and how
-- many rows went from each table. It holds no content, so keeping it keeps
-- nothing of what was said. It lasts until the account itself is erased:
-- public.erase of the account removes every receipt of the facilitator
-- (the account's own receipt is returned, never kept, so nothing of the
-- facilitator stays), and so does deleting the user in Supabase Auth.
create table public.erasure_receipts (
  id uuid not null default gen_random_uuid(),
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  -- No foreign key: the learner is gone.
  learner_id uuid not null,
  erased_at timestamptz not null default now(),
  -- {"table": rows removed, …}: counts only.
  removed jsonb not null check (jsonb_typeof(removed) = 'object'),
  primary key (facilitator_id, id)
);

create index erasure_receipts_recent on public.erasure_receipts (facilitator_id, erased_at desc);

alter table public.erasure_receipts enable row level security;

-- A facilitator reads their own receipts; nobody writes them but
-- public.erase, so a receipt cannot be forged, changed or taken back.
revoke all on public.erasure_receipts from anon;
revoke insert, update, delete, truncate, trigger, references on public.erasure_receipts from authenticated;
grant select on public.erasure_receipts to authenticated;

create policy erasure_receipts_select on public.erasure_receipts for select to authenticated
  using ((select auth.uid()) = facilitator_id);

-- public.erase(scope, learner): scope 'learner' erases the learner (which
-- must be the caller's), scope 'account' everything of the caller's
-- (learner null). The caller is auth.uid(), never an argument, so the
-- function can only erase the caller's own rows. It returns the receipt:
-- {facilitator_id, scope, learner_id, erased_at, removed}.
--
-- A learner not the caller's (or no learner at all) is the error P0002,
-- no_data_found, and changes nothing.
--
-- Rows are deleted children first, each table by statement, so that the
-- receipt counts every row and no trigger sees half a conversation: the
-- turns go before the active record, whose delete trigger would otherwise
-- archive them again. The learners go last; any row a later table keeps
-- of them goes with them by its foreign key.
--
-- The vocabulary keeps the words the facilitator's other conversations
-- still use: only the words of the learner's turns that no other turn of
-- the facilitator holds are removed (collected as the collect_words
-- trigger collects them, migration 0014). They are worked out before the
-- turns go.
--
-- The quota counters stay when an account is erased: they hold counts,
-- not content, and erasing must not hand back a spent day's budget. They
-- go with the user in Supabase Auth.
--
-- The learners in scope are locked first: a post to one of them, which
-- checks its learner by foreign key, waits for the erasure and then fails
-- rather than adding turns behind it.
create function public.erase(p_scope text, p_learner_id uuid) returns jsonb
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  -- Tables with a learner_id, in the order their rows go.
  per_learner text[] := array['conversation_turns', 'conversation_history_archive', 'conversation_updates',
    'memory_history', 'learner_memories', 'memory_jobs', 'consolidation_runs', 'session_openings',
    'mentor_sessions', 'learner_profiles'];
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

  foreach tbl in array per_learner loop
    execute format('delete from public.%I where facilitator_id = $1 and ($2::uuid is null or learner_id = $2)', tbl)
      using me, p_learner_id;
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

-- Only the service calls it, as it makes every other change (migration
-- 0013). Granted to authenticated it would still erase only the caller's
-- own rows, so no facilitator could touch another's; but it is the most
-- destructive write there is, and through the Data API it would skip the
-- service's write quota, its per-learner ordering with posts, and its log,
-- the only record an account's erasure leaves. anon has no caller to erase
-- for.
revoke execute on function public.erase(text, uuid) from public, anon, authenticated;
grant execute on function public.erase(text, uuid) to memory_service;

insert into public.memory_migrations (version) values ('0023_erasure');
