package main

import (
	"slices"
	"testing"
)

var testTables = map[string]bool{"learners": true, "learner_memories": true, "memory_history": true, "conversation_turns": true, "search_vocabulary": true,
	"memory_jobs": true, "conversation_updates": true, "mentor_sessions": true, "session_openings": true}

func TestStatementsThatNameTheirFacilitatorAreRouted(t *testing.T) {
	routed := map[string]string{
		"a filter":             `select name from public.learners where facilitator_id = $1::uuid and id = $2::uuid`,
		"a filter by alias":    `select count(*) from public.conversation_turns t where t.facilitator_id = $1 and t.archive_id = $2`,
		"value first":          `select 1 from public.learners l where $1::uuid = l.facilitator_id`,
		"a variable":           `select count(*) from public.search_vocabulary v where v.facilitator_id = facilitator`,
		"a constant":           `select 1 from learners where facilitator_id = '00000000-0000-0000-0000-000000000001'`,
		"insert values":        `insert into public.learners (facilitator_id, name) values ($1, $2) returning id`,
		"insert select":        `insert into public.conversation_turns (facilitator_id, learner_id, role) select $1::uuid, $2::uuid, t.role from unnest($3::text[]) as t(role)`,
		"insert of a variable": `insert into public.search_vocabulary (facilitator_id, word) select facilitator, w.word from unnest(said) as w(word) on conflict do nothing`,
		"insert from a subquery": `insert into public.search_vocabulary as s (facilitator_id, word) select a.facilitator_id, w.word
			from (select t.facilitator_id, t.content from public.conversation_turns t where t.facilitator_id = facilitator and t.id = any(ids) offset 0) a
			cross join lateral unnest(string_to_array(a.content, ' ')) as w(word) group by a.facilitator_id, w.word on conflict do nothing`,
		"a join on the key": `select 1 from public.learners l join public.conversation_turns t on t.facilitator_id = l.facilitator_id and t.learner_id = l.id where l.facilitator_id = $1`,
		"a subquery": `update public.memory_jobs j set status = $3 from (select facilitator_id, id from public.memory_jobs
			where facilitator_id = $1::uuid and id = $2 for update skip locked) due
			where j.facilitator_id = due.facilitator_id and j.id = due.id`,
		"a data-modifying cte": `with opening as (delete from public.session_openings where facilitator_id = $1::uuid
			and coalesce(learner_id, $3) = $2::uuid) update public.mentor_sessions set last_message = $4
			where facilitator_id = $1::uuid and ended_at is null`,
		"a cte feeding an insert": `with job as (insert into public.memory_jobs (facilitator_id, kind) values ($1::uuid, $2) returning id)
			insert into public.conversation_updates (id, facilitator_id) select $4::uuid, $1::uuid from job`,
		"a not exists": `insert into public.conversation_updates (facilitator_id, learner_id) select $1::uuid, $2::uuid
			where not exists (select 1 from public.conversation_updates where facilitator_id = $1::uuid)
			and exists (select 1 from public.learners where facilitator_id = $1::uuid and id = $2::uuid)`,
		"a foreign key's check":  `SELECT 1 FROM ONLY "public"."learners" x WHERE "facilitator_id" OPERATOR(pg_catalog.=) $1 AND "id" OPERATOR(pg_catalog.=) $2 FOR KEY SHARE OF x`,
		"a foreign key's action": `DELETE FROM ONLY "public"."conversation_turns" WHERE $1 OPERATOR(pg_catalog.=) "facilitator_id" AND $2 OPERATOR(pg_catalog.=) "learner_id"`,
		"a trigger's row": `new.fair_at := greatest(now(), coalesce((select max(j.fair_at) + interval '1 second' from public.memory_jobs j
			where j.facilitator_id = new.facilitator_id and j.status in ('pending', 'running')), now()))`,
		"a loop's record": `with removed as (delete from public.learner_memories m where m.facilitator_id = due.facilitator_id
			and m.id = due.id returning m.facilitator_id, m.id), history as (insert into public.memory_history (facilitator_id, memory_id)
			select facilitator_id, id from removed) select count(*) from removed`,
		"no table of ours":     `select exists (select 1 from auth.users where id = $1::uuid)`,
		"a column qualified":   `select conversation_turns.id from public.conversation_turns where facilitator_id = $1`,
		"a comment and string": `select 1 /* from public.learners */ from public.learners where facilitator_id = $1 and name <> 'from learners'`,
	}
	for what, query := range routed {
		if got := unroutedTables(query, testTables); len(got) != 0 {
			t.Errorf("%s: %v reported unrouted in\n%s", what, got, query)
		}
	}
}

func TestStatementsThatDoNotNameOneFacilitatorAreReported(t *testing.T) {
	unrouted := map[string]struct {
		query string
		want  []string
	}{
		"no filter":              {`select count(*) from public.learners`, []string{"learners"}},
		"another column":         {`select * from public.memory_jobs where kind = $1 order by fair_at limit $2`, []string{"memory_jobs"}},
		"a list of facilitators": {`select * from public.learners where facilitator_id = any($1)`, []string{"learners"}},
		"one table of two":       {`select 1 from public.learners l, public.conversation_turns t where l.facilitator_id = $1`, []string{"conversation_turns"}},
		"a join on another key":  {`select 1 from public.learners l join public.conversation_turns t on t.learner_id = l.id where l.facilitator_id = $1`, []string{"conversation_turns"}},
		"a transition table": {`with added as (insert into public.search_vocabulary (facilitator_id, word)
			select distinct n.facilitator_id, w.word from new_turns n cross join lateral unnest(n.words) as w(word)
			where not exists (select 1 from public.search_vocabulary v where v.facilitator_id = n.facilitator_id and v.word = w.word)
			on conflict do nothing returning facilitator_id) select array_agg(distinct a.facilitator_id) from added a`,
			[]string{"search_vocabulary"}},
		"an insert of many": {`with due as (select m.facilitator_id from public.learners m group by m.facilitator_id)
			insert into public.memory_jobs (facilitator_id, kind) select facilitator_id, $1 from due`, []string{"learners", "memory_jobs"}},
		"an unfiltered subquery": {`update public.memory_jobs j set status = $1 from (select facilitator_id, id from public.memory_jobs
			where status = $2 limit 1 for update skip locked) due where j.facilitator_id = due.facilitator_id and j.id = due.id`,
			[]string{"memory_jobs"}},
	}
	for what, c := range unrouted {
		if got := unroutedTables(c.query, testTables); !slices.Equal(got, c.want) {
			t.Errorf("%s: reported %v, want %v in\n%s", what, got, c.want, c.query)
		}
	}
}

func TestAnInsertSelectThatCitusWouldCopyIsReported(t *testing.T) {
	cases := map[string][]string{
		`with changed as (update public.learner_memories set content = $2 where facilitator_id = $1 returning *),
			history as (insert into public.memory_history (facilitator_id, memory_id) select $1::uuid, id from changed)
			select * from changed`: {"memory_history"},
		`with changed as (update public.learner_memories set content = $2 where facilitator_id = $1 returning *),
			history as (insert into public.memory_history (facilitator_id, memory_id) select $1::uuid, id from changed returning id)
			select * from changed`: nil,
		`insert into public.search_vocabulary (facilitator_id, word) select $1, w from unnest($2::text[]) w on conflict do nothing`: nil,
		`insert into public.learners (facilitator_id, name) values ($1, $2)`:                                                        nil,
		`insert into public.learners (facilitator_id, name) select $1, n from unnest($2::text[]) n`:                                 {"learners"},
	}
	for query, want := range cases {
		if got := copiedInserts(query, testTables); !slices.Equal(got, want) {
			t.Errorf("copiedInserts = %v, want %v in\n%s", got, want, query)
		}
	}
}
