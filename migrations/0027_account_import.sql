-- Importing an account archive (POST /api/import) writes rows the service
-- otherwise leaves to the database: archived conversations, with their
-- turns already archived, and history rows. Rows with an identity id get
-- an import key, derived from the importing facilitator and the exported
-- id, so importing the same archive again finds them and stores nothing
-- twice.
alter table public.conversation_turns add column import_key uuid;
alter table public.memory_history add column import_key uuid;
create unique index conversation_turns_import_key on public.conversation_turns (facilitator_id, import_key)
  where import_key is not null;
create unique index memory_history_import_key on public.memory_history (facilitator_id, import_key)
  where import_key is not null;

-- An imported turn may arrive archived; any other is appended active.
alter policy conversation_turns_insert on public.conversation_turns
  with check ((select auth.uid()) = facilitator_id and (archive_id is null or import_key is not null));

-- The caller's own archived conversations, brought from another account.
grant insert on public.conversation_history_archive to memory_service;
create policy archive_import on public.conversation_history_archive for insert to memory_service
  with check ((select auth.uid()) = facilitator_id);
