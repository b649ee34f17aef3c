-- Migration 0017_quotas of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0017_quotas.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0017_quotas') then
      raise exception 'migration 0017_quotas was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000017; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- Quotas: each facilitator's usage, counted in the database so that limits
-- hold across restarts and across every server sharing it.
--
-- A counter's name says its window: 'read/minute', 'turns/day'. A minute
-- starts with the first use after the last one ended, so a burst cannot
-- take twice the limit across a clock minute's end; a day is a UTC day, so
-- a facilitator's budget renews at a time they can know. One row per
-- facilitator and counter holds the usage of the current window; a window
-- that has ended starts again from nothing at the next use, so the table
-- keeps a handful of rows per facilitator whatever the traffic.
create table public.usage_counters (
  facilitator_id uuid not null references auth.users (id) on delete cascade,
  counter text not null check (counter ~ '^[a-z_]+/(minute|day)$'),
  window_ends_at timestamptz not null,
  used bigint not null check (used >= 0),
  primary key (facilitator_id, counter)
);

alter table public.usage_counters enable row level security;

-- A facilitator may read their own usage. Nobody writes it but use_quota:
-- a user reaching the table through Supabase's Data API can neither lower
-- nor reset their counters.
create policy usage_counters_select on public.usage_counters for select to authenticated
  using ((select auth.uid()) = facilitator_id);
revoke insert, update, delete, truncate on public.usage_counters from anon, authenticated;

-- use_quota adds p_amount to the caller's counter, or refuses and adds
-- nothing when that would take the counter past p_quota; a null quota counts
-- without refusing (usage that happened already). The caller is auth.uid(),
-- never an argument, and the amount cannot be negative, so a user calling it
-- through the Data API can only add to their own usage.
--
-- A refusal is the error PT429, which PostgREST answers with HTTP 429: its
-- CONSTRAINT names the counter and its DETAIL is the whole seconds until the
-- window ends. Being an error, it undoes everything else the transaction
-- did, so a refused request changes nothing. The counter's row stays locked
-- until the transaction ends, which makes one facilitator's concurrent
-- requests take their turn at the limit.
create function public.use_quota(p_counter text, p_amount bigint, p_quota bigint)
returns void
language plpgsql security definer
set search_path = ''
as $$
declare
  caller uuid := auth.uid();
  period text := split_part(p_counter, '/', 2);
  window_end timestamptz;
  used_now bigint;
begin
  if caller is null then
    raise exception 'use_quota counts for a signed-in user' using errcode = '42501';
  end if;
  if p_amount is null or p_amount < 0 then
    raise exception 'use_quota only adds usage' using errcode = '22023';
  end if;
  if period not in ('minute', 'day') then
    raise exception 'a counter''s name ends in /minute or /day, not %', p_counter using errcode = '22023';
  end if;
  window_end := case period
    when 'minute' then now() + interval '1 minute'
    else date_trunc('day', now(), 'UTC') + interval '1 day'
  end;

  insert into public.usage_counters as c (facilitator_id, counter, window_ends_at, used)
  values (caller, p_counter, window_end, p_amount)
  on conflict (facilitator_id, counter) do update
    set used = case when c.window_ends_at <= now() then excluded.used else c.used + excluded.used end,
      window_ends_at = case when c.window_ends_at <= now() then excluded.window_ends_at else c.window_ends_at end
  returning c.used, c.window_ends_at into used_now, window_end;

  if used_now > p_quota then
    raise exception using
      errcode = 'PT429',
      message = format('the %s quota of %s is used up', p_counter, p_quota),
      detail = greatest(1, ceil(extract(epoch from window_end - now())))::text,
      constraint = p_counter;
  end if;
end
$$;

revoke execute on function public.use_quota(text, bigint, bigint) from public, anon, authenticated;
grant execute on function public.use_quota(text, bigint, bigint) to memory_service;

insert into public.memory_migrations (version) values ('0017_quotas');
