package handlers_test

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// TestErasureLeavesNoTrace plants a marker word in every kind of record of
// one learner (turns, active and archived; the summary; memories and their
// history; a job's payload and error; a consolidation run; sessions and the
// opening; the vocabulary; search's statistics of the archive; the
// profile), erases it three ways, and then finds the marker nowhere: in no
// row of any table of any schema, and not in a pg_dump of the database.
// The facilitator's other learner and another facilitator are left exactly
// as they were.
func TestErasureLeavesNoTrace(t *testing.T) {
	for _, how := range []struct {
		name  string
		erase func(t *testing.T, svc *apptest.Service, a apptest.User, emma string)
		// learnerOnly: the facilitator's other learner stays; otherwise
		// nothing of theirs does.
		learnerOnly bool
	}{
		{name: "DELETE /api/learners/{id}", learnerOnly: true, erase: func(t *testing.T, svc *apptest.Service, a apptest.User, emma string) {
			res := svc.Call(t, a.Token, http.MethodDelete, "/api/learners/"+emma, nil).WantStatus(http.StatusOK)
			receipt := res.Object("erasure")
			removed := receipt["removed"].(map[string]any)
			if receipt["scope"] != "learner" || receipt["learner_id"] != emma || receipt["facilitator_id"] != a.ID ||
				removed["conversation_turns"] != 54.0 || removed["conversation_history_archive"] != 1.0 || removed["learners"] != 1.0 {
				t.Fatalf("the receipt: %s", res.Raw)
			}
			listed := svc.Call(t, a.Token, http.MethodGet, "/api/erasures", nil).WantStatus(http.StatusOK)
			if listed.Body["count"] != 2.0 || !strings.Contains(string(listed.Raw), emma) {
				t.Fatalf("the receipts A reads (Leo's and Emma's): %s", listed.Raw)
			}
			// The learner's id stays in its receipt, and only there.
			if got := tablesHolding(t, svc, emma); fmt.Sprint(got) != "map[public.erasure_receipts:1]" {
				t.Errorf("the erased learner's id is found in %v, want only its receipt", got)
			}
			svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantError(http.StatusNotFound, "Learner not found")
		}},
		{name: "DELETE /api/account", erase: func(t *testing.T, svc *apptest.Service, a apptest.User, _ string) {
			res := svc.Call(t, a.Token, http.MethodDelete, "/api/account", nil).WantStatus(http.StatusOK)
			receipt := res.Object("erasure")
			if receipt["scope"] != "account" || receipt["learner_id"] != nil || receipt["removed"].(map[string]any)["learners"] != 2.0 ||
				receipt["removed"].(map[string]any)["erasure_receipts"] != 1.0 {
				t.Fatalf("the receipt: %s", res.Raw)
			}
			// The user stays in Supabase Auth, and their id nowhere else.
			if got := tablesHolding(t, svc, a.ID); fmt.Sprint(got) != "map[auth.users:1]" {
				t.Errorf("the erased account's id is found in %v, want only auth.users", got)
			}
			listed := svc.Call(t, a.Token, http.MethodGet, "/api/erasures", nil).WantStatus(http.StatusOK)
			if listed.Body["count"] != 0.0 {
				t.Errorf("receipts left after erasing the account: %s", listed.Raw)
			}
			learners := svc.Call(t, a.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
			if len(learners.Body["learners"].([]any)) != 0 {
				t.Errorf("learners left after erasing the account: %s", learners.Raw)
			}
		}},
		{name: "delete from auth.users", erase: func(t *testing.T, svc *apptest.Service, a apptest.User, _ string) {
			svc.Exec(t, `delete from auth.users where id = $1::uuid`, a.ID)
			if got := tablesHolding(t, svc, a.ID); len(got) != 0 {
				t.Errorf("the deleted user's id is found in %v", got)
			}
		}},
	} {
		t.Run(how.name, func(t *testing.T) {
			svc := apptest.Start(t, apptest.Options{})
			a, b := svc.NewUser(t), svc.NewUser(t)
			marker := "zorblax" + randomLetters(10)
			emma, max := svc.NewLearner(t, a, "Emma"), svc.NewLearner(t, a, "Max")
			plantEverywhere(t, svc, a, emma, "Emma "+marker)
			plantEverywhere(t, svc, a, max, "Max dinosaurs")
			plantEverywhere(t, svc, b, svc.NewLearner(t, b, "Noah"), "Noah volcanoes")
			// A learner erased before, so that the account has a receipt.
			leo := svc.NewLearner(t, a, "Leo")
			svc.PostTurns(t, a, leo, apptest.Exchange("Leo reads comics.", "Comics count as reading.")...).WantStatus(http.StatusOK)
			svc.Call(t, a.Token, http.MethodDelete, "/api/learners/"+leo, nil).WantStatus(http.StatusOK)

			// Search's statistics hold the marker's english stem, which may
			// differ from the word ("...y" becomes "...i"): both are looked for.
			stem := apptest.Scalar[string](t, svc.Pool, `select string_agg(lexeme, ' ') from unnest(to_tsvector('english', $1))`, marker)
			planted := tablesHolding(t, svc, marker)
			for table, n := range tablesHolding(t, svc, stem) {
				planted[table] += n
			}
			for _, table := range []string{"conversation_turns", "conversation_history_archive", "conversation_updates",
				"learner_memories", "memory_history", "memory_jobs", "consolidation_runs", "mentor_sessions",
				"session_openings", "search_vocabulary", "learner_profiles", "pending_actions", "archive_term_stats"} {
				if planted["public."+table] == 0 {
					t.Errorf("the marker was not planted in %s (found in %v)", table, planted)
				}
			}
			if n := svc.Count(t, `select count(*) from public.conversation_updates where summary like '%' || $1 || '%'`, marker); n != 1 {
				t.Errorf("the marker is in %d summaries, want 1", n)
			}
			if !strings.Contains(pgDump(t, svc), marker) {
				t.Fatal("pg_dump does not show the marker before the erasure: the search below would prove nothing")
			}
			othersBefore := digestOf(t, svc, b.ID, "")
			maxBefore := digestOf(t, svc, a.ID, emma)

			how.erase(t, svc, a, emma)

			for _, needle := range []string{marker, stem} {
				if found := tablesHolding(t, svc, needle); len(found) != 0 {
					t.Errorf("the marker (%s) is still in %v", needle, found)
				}
				if strings.Contains(pgDump(t, svc), needle) {
					t.Errorf("pg_dump --data-only still shows the marker (%s)", needle)
				}
			}
			if after := digestOf(t, svc, b.ID, ""); after != othersBefore {
				t.Errorf("another facilitator's rows changed:\nbefore %s\nafter  %s", othersBefore, after)
			}
			if !how.learnerOnly {
				return
			}
			if after := digestOf(t, svc, a.ID, emma); after != maxBefore {
				t.Errorf("the facilitator's other rows changed:\nbefore %s\nafter  %s", maxBefore, after)
			}
			// The vocabulary keeps exactly the words the remaining turns use:
			// "homework" (Max's too) stays, Emma's own words go.
			if stale := svc.Count(t, `
				select count(*) from (
					select word from public.search_vocabulary where facilitator_id = $1::uuid
					except
					select w.word from public.conversation_turns t
					cross join lateral unnest(tsvector_to_array(to_tsvector('simple', t.content))) as w(word)
					where t.facilitator_id = $1::uuid) v`, a.ID); stale != 0 {
				t.Errorf("%d words in the vocabulary that no remaining turn uses", stale)
			}
			if n := svc.Count(t, `select count(*) from public.search_vocabulary where facilitator_id = $1::uuid and word in ('homework', 'dinosaurs')`, a.ID); n != 2 {
				t.Errorf("the words the other learner's conversation uses: %d of 2 left", n)
			}
		})
	}
}

// plantEverywhere has the facilitator talk about the learner with text in
// every turn, and puts text in every other record kept of the learner: the
// summary, a memory and its history, the live and the ended session, the
// next opening, the profile and its consolidation run, and a job (the
// worker writes a job's error and a run's error, so the test writes them).
func plantEverywhere(t *testing.T, svc *apptest.Service, u apptest.User, learner, text string) {
	t.Helper()
	// 52 turns: 50 go to the archive, 2 stay active.
	var turns []mentor.Turn
	for i := range 26 {
		turns = append(turns, apptest.Exchange(fmt.Sprintf("%s and homework, evening %d", text, i),
			fmt.Sprintf("Keep %s homework short, evening %d", text, i))...)
	}
	svc.PostTurns(t, u, learner, turns...).WantStatus(http.StatusOK)
	memory := svc.AddMemory(t, u, learner, map[string]any{"type": "personal", "content": text + " worries about homework",
		"metadata": map[string]any{"emotion": "anxious"}})
	svc.Call(t, u.Token, http.MethodPatch, "/api/memories/"+memory, map[string]any{"content": text + " worries less about homework"}).
		WantStatus(http.StatusOK)
	svc.EndSession(t, u, learner)
	svc.PostTurns(t, u, learner, apptest.Exchange(text+" finished the homework", "Well done, "+text)...).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodPut, "/api/learners/"+learner+"/profile", map[string]any{
		"lines": []map[string]any{{"category": "goals", "text": text + " does homework alone"}},
	}).WantStatus(http.StatusOK)
	// A correction the mentor proposed, waiting for the facilitator, and
	// the learner's and the account's settings.
	svc.Call(t, u.Token, http.MethodPost, "/api/tools/call", map[string]any{"name": "correct_memory",
		"arguments": fmt.Sprintf(`{"memory_id": %q, "content": %q}`, memory, text+" loves homework now")}).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodPut, "/api/learners/"+learner+"/settings", map[string]any{"learning": true}).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodPut, "/api/account/settings", map[string]any{"retention_days": 365}).WantStatus(http.StatusOK)
	svc.Exec(t, `update public.learner_memories set embedding = '[0.1, 0.2, 0.3]', embedding_model = 'test-embedder'
		where facilitator_id = $1::uuid and learner_id = $2::uuid`, u.ID, learner)
	svc.Exec(t, `insert into public.memory_jobs (facilitator_id, learner_id, kind, dedupe_key, payload, status, last_error)
		values ($1::uuid, $2::uuid, 'extract', 'planted:' || $2, jsonb_build_object('note', $3::text), 'failed', 'model refused: ' || $3)`,
		u.ID, learner, text)
	svc.Exec(t, `update public.consolidation_runs set error = 'stopped at: ' || $3
		where facilitator_id = $1::uuid and learner_id = $2::uuid`, u.ID, learner, text)
}

// tablesHolding counts, in every table of every schema that holds data,
// the rows whose text holds needle (case-insensitively), by table.
func tablesHolding(t *testing.T, svc *apptest.Service, needle string) map[string]int {
	t.Helper()
	found := map[string]int{}
	for _, table := range allTables(t, svc) {
		if n := svc.Count(t, `select count(*) from `+table+` r where strpos(lower(r::text), lower($1)) > 0`, needle); n > 0 {
			found[table] = n
		}
	}
	return found
}

// allTables names every table of the database outside Postgres's own
// schemas, quoted for SQL.
func allTables(t *testing.T, svc *apptest.Service) []string {
	t.Helper()
	return apptest.Column[string](t, svc.Pool, `select format('%I.%I', n.nspname, c.relname)
		from pg_class c join pg_namespace n on n.oid = c.relnamespace
		where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema')
			and n.nspname not like 'pg\_toast%' and n.nspname not like 'pg\_temp%'
		order by 1`)
}

// digestOf is the row count and an md5 of the rows, table by table, of
// what an erasure must leave alone. Without butLearner: the facilitator's
// rows in every table in public kept per facilitator. With it: the
// facilitator's other learners, and their rows (or those of no learner) in
// every table kept per learner.
func digestOf(t *testing.T, svc *apptest.Service, facilitatorID, butLearner string) string {
	t.Helper()
	column, where, args := "facilitator_id", `r.facilitator_id = $1::uuid`, []any{facilitatorID}
	if butLearner != "" {
		column, where, args = "learner_id", where+` and r.learner_id is distinct from $2::uuid`, append(args, butLearner)
	}
	// The receipts are what an erasure adds.
	tables := apptest.Column[string](t, svc.Pool, `select c.relname::text from pg_class c
		join pg_attribute a on a.attrelid = c.oid and a.attname = $1 and not a.attisdropped
		where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname <> 'erasure_receipts'
		order by 1`, column)
	var b strings.Builder
	for _, table := range tables {
		fmt.Fprintf(&b, "%s: %s\n", table, rowsDigest(t, svc, table, where, args...))
	}
	if butLearner != "" {
		fmt.Fprintf(&b, "learners: %s\n", rowsDigest(t, svc, "learners", `r.facilitator_id = $1::uuid and r.id <> $2::uuid`, args...))
	}
	return b.String()
}

// rowsDigest is the count and an md5 of the rows r of a table in public
// that meet where.
func rowsDigest(t *testing.T, svc *apptest.Service, table, where string, args ...any) string {
	t.Helper()
	return apptest.Scalar[string](t, svc.Pool, `select count(*) || ' rows, md5 ' || md5(coalesce(string_agg(r::text, E'\n' order by r::text), ''))
		from public.`+table+` r where `+where, args...)
}

// pgDump is the data of the service's database as pg_dump --data-only
// writes it, by the pg_dump of the server's version: the private cluster's
// (beside its pg_ctl, see scripts/lib/postgres.sh), or PG_BIN's, or the
// one on PATH.
func pgDump(t *testing.T, svc *apptest.Service) string {
	t.Helper()
	major := apptest.Scalar[int](t, svc.Pool, `select current_setting('server_version_num')::int / 10000`)
	candidates := []string{filepath.Join(fmt.Sprintf("/usr/lib/postgresql/%d/bin", major), "pg_dump")}
	if dir := os.Getenv("PG_BIN"); dir != "" {
		candidates = append([]string{filepath.Join(dir, "pg_dump")}, candidates...)
	}
	if onPath, err := exec.LookPath("pg_dump"); err == nil {
		candidates = append(candidates, onPath)
	}
	for _, bin := range candidates {
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		out, err := exec.CommandContext(t.Context(), bin, "--data-only", "--no-owner", "--dbname", svc.Pool.Config().ConnString()).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return string(out)
	}
	t.Fatalf("no pg_dump found for PostgreSQL %d (tried %v)", major, candidates)
	return ""
}

// randomLetters are n random lower-case letters: a word the vocabulary
// collects (letters only) and no other test writes.
func randomLetters(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return string(b)
}

// A request to erase that is malformed, or names a learner that is not the
// caller's, gets a JSON error and erases nothing.
func TestErasureRefusesBadInput(t *testing.T) {
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	svc.PostTurns(t, a, emma, apptest.Exchange("Emma loves maps.", "Let's use them.")...).WantStatus(http.StatusOK)
	before := digestOf(t, svc, a.ID, "")
	unchanged := func(t *testing.T, _ apptest.Response) {
		if after := digestOf(t, svc, a.ID, ""); after != before {
			t.Fatalf("A's data changed:\nbefore %s\nafter  %s", before, after)
		}
	}
	for _, sc := range []apptest.Scenario{
		{Method: http.MethodDelete, Path: "/api/learners/not-a-uuid", WantStatus: http.StatusBadRequest, WantError: "learner id must be a uuid"},
		{Method: http.MethodDelete, Path: "/api/learners/null", WantStatus: http.StatusBadRequest, WantError: "learner id must be a uuid"},
		{Method: http.MethodDelete, Path: "/api/learners/" + emma + "x", WantStatus: http.StatusBadRequest, WantError: "learner id must be a uuid"},
		{Method: http.MethodDelete, Path: "/api/learners/00000000-0000-0000-0000-000000000000", WantStatus: http.StatusNotFound, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/erasures?limit=0", WantStatus: http.StatusBadRequest, WantError: "limit must be between 1 and 100"},
		{Method: http.MethodGet, Path: "/api/erasures?limit=101", WantStatus: http.StatusBadRequest, WantError: "limit must be between 1 and 100"},
		{Method: http.MethodGet, Path: "/api/erasures?limit=many", WantStatus: http.StatusBadRequest},
	} {
		sc.Token, sc.Check = a.Token, unchanged
		sc.Run(t, svc)
	}
	for _, sc := range []apptest.Scenario{
		{Method: http.MethodDelete, Path: "/api/account", WantStatus: http.StatusUnauthorized, WantError: "Authentication required"},
		{Method: http.MethodDelete, Path: "/api/learners/" + emma, WantStatus: http.StatusUnauthorized, WantError: "Authentication required"},
		{Method: http.MethodPost, Path: "/api/account", Token: a.Token, WantStatus: http.StatusMethodNotAllowed},
	} {
		sc.Check = unchanged
		sc.Run(t, svc)
	}
}
