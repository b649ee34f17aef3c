package postgres_test

// The store's statements read the indexes meant for them, so that their
// cost does not grow with what else a facilitator has stored.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
)

// TestResentTurnsAreFoundByIndexProbes checks that looking up resent turns
// by client id probes the (facilitator, client id) index of migration 0007
// under the generic plan that prepared statements settle on, instead of
// reading every turn of a long conversation, as it did before.
func TestResentTurnsAreFoundByIndexProbes(t *testing.T) {
	pgtest.SkipOnCitus(t, noGenericPlanOnCitus)
	ctx := context.Background()
	pool, facilitator, learner := newLearnerDatabase(t)
	setup := []string{
		// A long conversation, every turn with a client id.
		`insert into public.conversation_turns (facilitator_id, learner_id, role, content, client_turn_id)
			select '` + facilitator + `', '` + learner + `', 'user', 'turn ' || n, 'client-' || n
			from generate_series(1, 5000) n`,
		`analyze public.conversation_turns`,
	}
	for _, q := range setup {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// EXPLAIN EXECUTE takes no parameters of its own: the values are literals.
	genericPlanReadsOnly(t, pool, "stored_client_turns", postgres.StoredClientTurnsSQL,
		`'`+facilitator+`', '`+learner+`', array['client-4999', 'client-5000']`, "conversation_turns_owner_client_id")
}

// besideALongHistory adds another facilitator's long history (20,000
// turns) and brings the statistics to where autovacuum leaves them, so
// that the planner reads the tables as it would in service, not a test's
// few rows whole.
func besideALongHistory(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	other, otherLearner := seedLearner(t, pool)
	for _, q := range []string{
		`insert into public.conversation_turns (facilitator_id, learner_id, role, content)
			select '` + other + `', '` + otherLearner + `', 'user', 'another zeppelin, turn ' || n from generate_series(1, 20000) n`,
		`vacuum analyze public.conversation_turns, public.conversation_history_archive`,
	} {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// actingAs is the setup that has a plan check's statement run as the
// service runs it: its role, under row-level security, with the
// facilitator's claims.
func actingAs(facilitator string) []string {
	return []string{
		`select set_config('request.jwt.claims', '{"sub": "` + facilitator + `", "role": "authenticated"}', false)`,
		`set role memory_service`,
	}
}

// noGenericPlanOnCitus is why a check of a generic plan is left out on
// Citus.
const noGenericPlanOnCitus = "Citus plans a statement with its values, which pick its shard, and the plan " +
	"that reads the shard's indexes is the worker's: a prepared statement has no generic plan to check"

// genericPlanReadsOnly checks that query, prepared as name under the
// generic plan prepared statements settle on and executed with args (SQL
// literals), reads the index want alone and no table whole.
func genericPlanReadsOnly(t *testing.T, pool *pgxpool.Pool, name, query, args, want string) {
	t.Helper()
	parsed, plan := genericPlan(t, pool, name, query, args, false, nil)
	if indexes := parsed.indexes(); len(indexes) != 1 || indexes[0] != want || strings.Contains(string(plan), "Seq Scan") {
		t.Fatalf("the generic plan of %s reads indexes %v, want %s alone and no table whole:\n%s", name, indexes, want, plan)
	}
}

// genericPlan is the plan of query, prepared as name under the generic
// plan prepared statements settle on and executed with args (SQL
// literals), as EXPLAIN gives it in JSON; with analyze, run, with the rows
// each node returned. The setup statements run first on the connection
// (to act as a role, say).
func genericPlan(t *testing.T, pool *pgxpool.Pool, name, query, args string, analyze bool, setup []string) (planNode, []byte) {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	defer func() {
		// Back to the pool as it came; the statements pgx prepared on the
		// connection stay.
		if _, err := conn.Exec(context.Background(), `reset all; reset role; deallocate `+name); err != nil {
			t.Fatal(err)
		}
	}()
	for _, q := range append(setup, `set plan_cache_mode = force_generic_plan`, `prepare `+name+` as `+query) {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	options := "format json"
	if analyze {
		options += ", analyze"
	}
	var plan []byte
	if err := conn.QueryRow(ctx, `explain (`+options+`) execute `+name+`(`+args+`)`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var parsed []struct{ Plan planNode }
	if err := json.Unmarshal(plan, &parsed); err != nil || len(parsed) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	return parsed[0].Plan, plan
}

// planNode is a node of EXPLAIN's JSON plan, with the fields the tests read.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	Filtered     float64    `json:"Rows Removed by Filter"`
	Rechecked    float64    `json:"Rows Removed by Index Recheck"`
	Plans        []planNode `json:"Plans"`
}

// indexes lists the indexes the plan reads, in plan order.
func (n planNode) indexes() []string {
	var names []string
	if n.IndexName != "" {
		names = append(names, n.IndexName)
	}
	for _, child := range n.Plans {
		names = append(names, child.indexes()...)
	}
	return names
}

// seqScans lists the tables the plan reads whole.
func (n planNode) seqScans() []string {
	var tables []string
	if n.NodeType == "Seq Scan" {
		tables = append(tables, n.RelationName)
	}
	for _, child := range n.Plans {
		tables = append(tables, child.seqScans()...)
	}
	return tables
}

// rowsOf is how many rows the plan's scans of a table read in all (from
// EXPLAIN ANALYZE): those they returned and those their conditions then
// turned away.
func (n planNode) rowsOf(table string) float64 {
	rows := 0.0
	if n.RelationName == table {
		rows += (n.ActualRows + n.Filtered + n.Rechecked) * n.ActualLoops
	}
	for _, child := range n.Plans {
		rows += child.rowsOf(table)
	}
	return rows
}

// The opening is built from the most important personal and context
// memories, across both types: 30 of them, whatever else the learner has;
// and beside them the most important academic memories of the session
// that ended, at most 10.
func TestOpeningReadsTheMostImportantPersonalAndContextMemories(t *testing.T) {
	ctx := context.Background()
	pool, facilitator, learner := newLearnerDatabase(t)
	var ended string
	if err := pool.QueryRow(ctx, `insert into public.mentor_sessions (facilitator_id, learner_id, ended_at, end_reason)
		values ($1::uuid, $2::uuid, now(), 'ended') returning id::text`, facilitator, learner).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	// 40 memories of each type with importances interleaved across the
	// types; the academic ones matter most but are not for the opening,
	// except the 10 most important of the 14 learnt in the session that
	// ended.
	var want []string
	for i := range 40 {
		for _, kind := range []string{"personal", "context", "academic"} {
			importance := (float64(i) / 40) / 2
			switch kind {
			case "context":
				importance += 0.5 / 80
			case "academic":
				importance += 0.5
			}
			var session *string
			if kind == "academic" && i%3 == 0 {
				session = &ended
			}
			var id string
			if err := pool.QueryRow(ctx, `insert into public.learner_memories
				(facilitator_id, learner_id, type, content, importance, confidence, source, session_id)
				values ($1::uuid, $2::uuid, $3, $4, $5, 0.9, 'added', $6::uuid) returning id::text`,
				facilitator, learner, kind, fmt.Sprintf("%s fact %d", kind, i), importance, session).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if kind != "academic" && i >= 25 || session != nil && i >= 12 {
				want = append(want, id)
			}
		}
	}

	ids, importance, err := postgres.OpeningMemoryIDs(ctx, pool, facilitator, learner, ended)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(importance); i++ {
		if importance[i] > importance[i-1] && i != postgres.OpeningMemories {
			t.Fatalf("memory %d is more important than the one before it: %v", i, importance)
		}
	}
	slices.Sort(ids)
	slices.Sort(want)
	if len(ids) != postgres.OpeningMemories+10 || !slices.Equal(ids, want) {
		t.Fatalf("the opening read %d memories %v, want the %d most important personal and context ones and the 10 of the session %v",
			len(ids), ids, postgres.OpeningMemories, want)
	}
}
