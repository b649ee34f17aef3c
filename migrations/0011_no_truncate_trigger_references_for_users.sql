-- The roles a user can reach (anon, and authenticated, which Supabase's
-- Data API runs a signed-in user's requests as) hold only what row-level
-- security can govern: select, insert, update and delete. TRUNCATE would
-- empty a table for every tenant, RLS or not; TRIGGER would let a user add
-- code that runs as whoever writes the table next (the worker); REFERENCES
-- would let a user's table hold keys into ours. Supabase's default
-- privileges grant them all, for the tables here and for any created later
-- by the role that migrates.
revoke truncate, trigger, references on all tables in schema public from anon, authenticated;
alter default privileges in schema public revoke truncate, trigger, references on tables from anon, authenticated;
