-- An archived conversation's search words were a generated column: its
-- summary's words at weight A, and at weight B the words of its turns,
-- parsed again from the row's copy of them (jsonb_to_tsvector). Every
-- turn's words are stored with it already (conversation_turns.content_vector,
-- parsed once, by the insert that posted it), so archiving a segment parsed
-- its 50 turns a second time: about 4.6 ms of an archiving post's 8 ms of
-- Postgres time, more than the rest of the archive's insert together.
--
-- The column is now written by a trigger, whoever writes the row, and is
-- never anything but what it derives. An archive that holds its turns by a
-- range of log ids (migration 0037: every archive the service makes) takes
-- the stored words of those turns, concatenated in order as the active
-- conversation's vector is (migration 0036): the same lexemes, each as many
-- times, so search ranks it as before. One that holds its turns only as the
-- row's copy (an import, or an archive made before migration 0037) is parsed
-- from the copy, as the generated column was.
--
-- The trigger reads the turns of the facilitator it names, which Citus
-- serves from the shard beside the archive's (migration 0043).
--
-- Citus refuses to drop a column's expression on a distributed table ("alter
-- table command is currently unsupported"), so where the archive is one
-- already, the expression is dropped with Citus's propagation of the
-- statement turned off, on the coordinator's table, on each shard and on each
-- worker's copy of the table's definition, the three places it is defined.
do $$
declare
  distributed boolean := false;
  propagation text;
  failed bigint;
begin
  if exists (select from pg_extension where extname = 'citus') then
    execute 'select exists (select from pg_dist_partition where logicalrelid = $1)'
      into distributed using 'public.conversation_history_archive'::regclass;
  end if;
  if not distributed then
    alter table public.conversation_history_archive alter column search_vector drop expression;
    return;
  end if;
  propagation := current_setting('citus.enable_ddl_propagation');
  perform set_config('citus.enable_ddl_propagation', 'off', true);
  alter table public.conversation_history_archive alter column search_vector drop expression;
  execute $sql$select count(*) from run_command_on_shards('public.conversation_history_archive',
      'alter table %s alter column search_vector drop expression') where not success$sql$ into failed;
  if failed > 0 then
    raise exception 'the search vector''s expression could not be dropped on % shards', failed;
  end if;
  execute $sql$select count(*) from run_command_on_workers('set citus.enable_ddl_propagation = off;
      alter table if exists public.conversation_history_archive alter column search_vector drop expression') where not success$sql$
    into failed;
  if failed > 0 then
    raise exception 'the search vector''s expression could not be dropped on % workers', failed;
  end if;
  -- The trigger below is created on the shards too.
  perform set_config('citus.enable_ddl_propagation', propagation, true);
end
$$;

create function public.archive_search_vector() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  turn_words tsvector;
begin
  if new.first_turn_id is null then
    turn_words := jsonb_to_tsvector('english',
      jsonb_path_query_array(new.conversation_turns, '$[*].content'), '["string"]');
  else
    select coalesce(public.tsvector_agg(t.content_vector order by t.id), ''::tsvector) into turn_words
    from public.conversation_turns t
    where t.facilitator_id = new.facilitator_id
      and coalesce(t.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
        = coalesce(new.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
      and t.archive_id is null
      and t.id between new.first_turn_id and new.last_turn_id;
  end if;
  new.search_vector := setweight(to_tsvector('english', coalesce(new.summary, '')), 'A')
    || setweight(turn_words, 'B');
  return new;
end
$$;

revoke execute on function public.archive_search_vector() from public, anon, authenticated;

create trigger search_vector
before insert or update on public.conversation_history_archive
for each row
execute function public.archive_search_vector();
