-- The settings a request runs with (the caller's claims, which row-level
-- security reads through auth.uid(), the archive limit the triggers read,
-- the statement and lock timeouts) are set with SET LOCAL, through this
-- function. On Citus the policies and triggers run on the worker nodes
-- that hold the rows, so the settings must reach them too: Citus passes a
-- SET LOCAL made within a transaction block on to every node the
-- transaction uses (citus.propagate_set_commands = 'local', which
-- `server migrate --citus` sets for the database), and passes nothing of
-- set_config(), which the service called until now. Without them a
-- worker's policies see no caller: writes fail and reads find nothing.
--
-- SET LOCAL takes no parameters, so its value would have to be written
-- into the statement, a statement of its own for every caller and token;
-- this function takes them as arguments, so the service's statement stays
-- one prepared statement. Like set_config(name, value, true) it returns
-- the value. On plain Postgres and Supabase it is exactly SET LOCAL.
create function public.set_local(p_name text, p_value text) returns text
language plpgsql
set search_path = ''
as $$
begin
  -- A setting's name, never SQL: letters, digits and _, parts joined by dots.
  if p_name !~ '^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$' then
    raise exception 'not a setting''s name: %', p_name using errcode = '22023';
  end if;
  execute pg_catalog.format('set local %s = %L', p_name, p_value);
  return p_value;
end
$$;

-- Only the service's roles set up a transaction with it. A signed-in user
-- calling it through the Data API could only change their own request's
-- settings, which set_config() lets anyone do; still, it is no part of the
-- API.
revoke execute on function public.set_local(text, text) from public, anon, authenticated;
grant execute on function public.set_local(text, text) to memory_service, memory_worker;
