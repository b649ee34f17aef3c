-- What Supabase provides and the memory schema relies on: the auth schema,
-- auth.users, auth.uid()/auth.role()/auth.jwt(), and the anon, authenticated
-- and service_role roles with Supabase's grants. On a Supabase database all of
-- it already exists and every statement below leaves it alone; on a plain
-- Postgres (local, CI) it creates a copy that behaves the same, so the same
-- policies run everywhere.

-- Existence is checked before each create because on Supabase the migrating
-- role may lack the privilege to create what is already there.
do $$
begin
  if to_regnamespace('auth') is null then
    create schema auth;
  end if;
  if to_regnamespace('extensions') is null then
    create schema extensions;
  end if;
end
$$;

-- Roles are cluster-wide, so two databases migrated at once can race to
-- create them; losing that race is fine.
do $$
declare
  r record;
begin
  for r in
    select * from (values
      ('anon', 'nologin noinherit'),
      ('authenticated', 'nologin noinherit'),
      ('service_role', 'nologin noinherit bypassrls')
    ) as v(name, options)
  loop
    if not exists (select 1 from pg_roles where rolname = r.name) then
      begin
        execute format('create role %I %s', r.name, r.options);
      exception when duplicate_object or unique_violation then
        null;
      end;
    end if;
  end loop;
end
$$;

-- The service logs in as its own role and switches to authenticated for each
-- request's transaction, so it must be a member (as Supabase's authenticator
-- and postgres roles are).
do $$
begin
  if not pg_has_role(current_user, 'authenticated', 'member') then
    execute format('grant authenticated to %I', current_user);
  end if;
end
$$;

-- auth.users as Supabase defines it, less columns nothing here reads; every
-- column but id is nullable, as there.
do $$
begin
  if to_regclass('auth.users') is null then
    create table auth.users (
      instance_id uuid,
      id uuid not null primary key,
      aud varchar(255),
      role varchar(255),
      email varchar(255),
      encrypted_password varchar(255),
      email_confirmed_at timestamptz,
      last_sign_in_at timestamptz,
      raw_app_meta_data jsonb,
      raw_user_meta_data jsonb,
      is_super_admin boolean,
      created_at timestamptz,
      updated_at timestamptz,
      phone text,
      confirmed_at timestamptz,
      banned_until timestamptz,
      deleted_at timestamptz,
      is_anonymous boolean
    );
  end if;
end
$$;

-- The claim helpers read the settings PostgREST (and this service) set per
-- transaction, preferring the older per-claim setting as Supabase does.
do $$
begin
  if to_regprocedure('auth.uid()') is null then
    create function auth.uid() returns uuid
    language sql stable
    as $f$
      select coalesce(
        nullif(current_setting('request.jwt.claim.sub', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
      )::uuid
    $f$;
  end if;
  if to_regprocedure('auth.role()') is null then
    create function auth.role() returns text
    language sql stable
    as $f$
      select coalesce(
        nullif(current_setting('request.jwt.claim.role', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
      )::text
    $f$;
  end if;
  if to_regprocedure('auth.jwt()') is null then
    create function auth.jwt() returns jsonb
    language sql stable
    as $f$
      select coalesce(
        nullif(current_setting('request.jwt.claim', true), ''),
        nullif(current_setting('request.jwt.claims', true), '')
      )::jsonb
    $f$;
  end if;
end
$$;

-- Supabase's grants: the API roles may use the schemas and, subject to RLS,
-- everything the owner creates in public.
grant usage on schema auth to anon, authenticated, service_role;
grant usage on schema extensions to anon, authenticated, service_role;
grant usage on schema public to anon, authenticated, service_role;
grant execute on all functions in schema auth to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;
