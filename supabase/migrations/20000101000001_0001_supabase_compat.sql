-- Migration 0001_supabase_compat of mentormemory, for the Supabase CLI.
-- Written by `server migrate --emit-supabase` from migrations/0001_supabase_compat.sql:
-- change that file and emit again, never this one.

do $supabase_cli$
begin
  perform pg_advisory_xact_lock(7361902411);
  -- Nested, as the inner query cannot be planned before the table exists.
  if to_regclass('public.memory_migrations') is not null then
    if exists (select 1 from public.memory_migrations where version = '0001_supabase_compat') then
      raise exception 'migration 0001_supabase_compat was applied by server migrate, not recorded for the Supabase CLI'
        using hint = 'Record it once: supabase migration repair --status applied 20000101000001; then run server migrate, which records the others it applied for the CLI.';
    end if;
  end if;
end
$supabase_cli$;

-- On Supabase, the schema auth, auth.users, auth.uid(), auth.role(),
-- auth.jwt(), the roles anon, authenticated and service_role and their
-- grants exist already, owned by Supabase's roles, which the migrating role
-- may not change: migration 0001, which creates them on a plain Postgres,
-- is left out, and this checks they are there.
do $supabase_cli$
declare
  missing text;
begin
  select string_agg(part, ', ') into missing
  from (values
    ('schema auth', to_regnamespace('auth') is not null),
    ('schema extensions', to_regnamespace('extensions') is not null),
    ('table auth.users', to_regclass('auth.users') is not null),
    ('function auth.uid()', to_regprocedure('auth.uid()') is not null),
    ('function auth.role()', to_regprocedure('auth.role()') is not null),
    ('function auth.jwt()', to_regprocedure('auth.jwt()') is not null),
    ('role anon', to_regrole('anon') is not null),
    ('role authenticated', to_regrole('authenticated') is not null),
    ('role service_role', to_regrole('service_role') is not null)
  ) as parts(part, present)
  where not present;
  if missing is not null then
    raise exception 'not a Supabase database: % missing', missing
      using hint = 'Apply migrations/0001_supabase_compat.sql first on a plain Postgres, or migrate it with server migrate.';
  end if;
  if not pg_has_role(current_user, 'authenticated', 'member') then
    raise exception 'role % is not a member of authenticated, as Supabase''s postgres is', current_user;
  end if;
end
$supabase_cli$;

-- The record of applied migrations that server migrate keeps.
create table if not exists public.memory_migrations (
  version text primary key,
  applied_at timestamptz not null default now()
);
alter table public.memory_migrations enable row level security;

insert into public.memory_migrations (version) values ('0001_supabase_compat');
