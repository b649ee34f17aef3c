// Command routecheck holds the service to what Citus needs of it: every
// statement it sends to a table kept per facilitator names the
// facilitator by equality, so that Citus runs it on the one shard that
// holds that facilitator's rows (README "Running on Citus"). CI has no
// Citus, so the check reads what the test suite sent a plain Postgres.
//
//	routecheck -reset   before the suite: forget the statements seen so far
//	routecheck -check   after it: report each statement that breaks the rule
//
// With -optional, a cluster that does not record statements is reported
// and passes (scripts/test.sh, but under CI=true).
//
// DATABASE_URL names the test cluster, whose pg_stat_statements
// (shared_preload_libraries, track = all, track_utility = off; scripts/test.sh
// sets them) records every statement of every test database. Checked are
// the statements run as the service's roles (memory_service,
// memory_worker) and every statement run inside a function or a trigger,
// whoever called it; the tests' own statements, run as the login role,
// are not the service's. A statement the service sends as memory_service
// that fills such a table by INSERT … SELECT also needs RETURNING or ON
// CONFLICT (copiedInserts says why). The tables kept per facilitator are
// those of public and private with a facilitator_id, read from a database
// migrated for the purpose. A statement that cannot be routed by its
// nature is listed in allowed, with the reason.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/postgres"
)

// allowance is a kind of statement that reads or writes across
// facilitators by its nature, matched on its normalized text, and why.
type allowance struct {
	matches func(statement string) bool
	reason  string
}

func prefix(p string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, p) }
}

var allowed = []allowance{
	{prefix(`select facilitator_id::text, id from public.memory_jobs where kind = $1 and run_after <= now()`),
		"the worker finds the next due jobs among every facilitator's: a read of every shard, which locks nothing; " +
			"the lease that follows names the job's facilitator"},
	{prefix(`select facilitator_id::text, learner_id::text from public.mentor_sessions where ended_at is null and last_activity_at <=`),
		"the worker finds the sessions gone idle among every facilitator's: a read of every shard; " +
			"ending each one names its facilitator"},
	{prefix(`select m.facilitator_id, m.learner_id from ( select facilitator_id, learner_id, max(updated_at) as changed from public.learner_memories`),
		"the nightly sweep finds the learners due a consolidation among every facilitator's: a read of every shard; " +
			"queueing each one names its facilitator (migration 0042)"},
	{prefix(`select m.facilitator_id, m.id, s.retention_days from public.learner_memories m join public.facilitator_settings s on s.facilitator_id = m.facilitator_id`),
		"the retention sweep finds the memories due to be forgotten among every facilitator's: a read of every shard; " +
			"forgetting each one names its facilitator (migration 0042)"},
	{prefix(`with spans as ( select t.facilitator_id, t.archive_id, min(t.id) as first_id, max(t.id) as last_id from public.conversation_turns t where t.archive_id is not null and (p_facilitators is null`),
		"migration 0055 ranges the archives made before ranges in one pass over every facilitator's, once, as it is " +
			"applied (with no list, which Citus can plan); migration 0056 replaced it by a statement per facilitator"},
	{prefix(`select distinct a.facilitator_id from public.conversation_history_archive a where a.last_turn_id is null`),
		"migration 0056 (and the benchmark's loader) finds the facilitators with archives made before ranges: a read of " +
			"every shard; ranging each one's archives names them"},
	{prefix(`select facilitator_id::text, array_agg(conversation_id::text order by listed_at) from ( select facilitator_id, conversation_id, listed_at from private.summary_vectors_due`),
		"the worker finds the summaries settled since they changed among every facilitator's: a read of every shard; " +
			"parsing each facilitator's names them (migration 0057)"},
	{regexp.MustCompile(`^select k\.kind, count\(j\.id\) filter .* left join public\.memory_jobs j on j\.kind = k\.kind`).MatchString,
		"the operator's metrics count the queue of every facilitator: a read of every shard"},
	// The migrations package tests what row-level security and the grants
	// let the service's role do, with statements the service never sends.
	{regexp.MustCompile(`^select count\(\*\) from public\.[a-z_]+( where facilitator_id is distinct from \$1::uuid)?$`).MatchString,
		"a test counting what row-level security lets the service's role see of other facilitators' rows"},
	{func(s string) bool {
		return (strings.HasPrefix(s, "update public.") || strings.HasPrefix(s, "delete from public.")) &&
			!strings.Contains(s, " where ") && !strings.Contains(s, " from (")
	},
		"a test of what row-level security and the grants let the service's role change: an UPDATE or DELETE " +
			"without WHERE, which the service never sends"},
}

func main() {
	reset := flag.Bool("reset", false, "forget the statements recorded so far, before the suite runs")
	flag.Bool("check", true, "report the statements that break the rule, after the suite ran (the default)")
	optional := flag.Bool("optional", false, "pass, saying so, on a cluster that records no statements")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := run(ctx, os.Getenv("DATABASE_URL"), *reset, os.Stdout)
	if errors.Is(err, errNotRecorded) && *optional {
		fmt.Fprintln(os.Stderr, "routecheck: skipped:", err)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "routecheck:", err)
		os.Exit(1)
	}
}

// errNotRecorded is run's answer on a cluster without pg_stat_statements.
var errNotRecorded = errors.New("the test cluster does not record statements (pg_stat_statements): restart it, " +
	"scripts/test.sh sets shared_preload_libraries when it starts the cluster")

// errUnrouted is run's answer when a statement breaks the rule.
var errUnrouted = errors.New("statements that Citus could not run on one shard (see above)")

func run(ctx context.Context, adminURL string, reset bool, out io.Writer) error {
	if adminURL == "" {
		return errors.New("DATABASE_URL is not set: it names the test cluster")
	}
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	var preloaded bool
	if err := admin.QueryRow(ctx, `select 'pg_stat_statements' = any(string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ','))`).Scan(&preloaded); err != nil {
		return err
	}
	if !preloaded {
		return errNotRecorded
	}
	if _, err := admin.Exec(ctx, `create extension if not exists pg_stat_statements`); err != nil {
		return err
	}
	if reset {
		_, err := admin.Exec(ctx, `select pg_stat_statements_reset()`)
		return err
	}

	tables, err := perFacilitatorTables(ctx, admin, adminURL)
	if err != nil {
		return fmt.Errorf("read the tables kept per facilitator: %w", err)
	}
	rows, err := admin.Query(ctx, `select s.query, coalesce(r.rolname, s.userid::text), s.toplevel, sum(s.calls)::bigint
		from pg_stat_statements s left join pg_roles r on r.oid = s.userid
		where not s.toplevel or r.rolname in ('memory_service', 'memory_worker')
		group by 1, 2, 3 order by 1, 2, 3`)
	if err != nil {
		return err
	}
	type seen struct {
		query, role string
		toplevel    bool
		calls       int64
	}
	statements, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (seen, error) {
		var s seen
		return s, row.Scan(&s.query, &s.role, &s.toplevel, &s.calls)
	})
	if err != nil {
		return err
	}
	var bad, allowedSeen int
	for _, s := range statements {
		if copied := copiedInserts(s.query, tables); s.toplevel && s.role == "memory_service" && len(copied) > 0 {
			bad++
			fmt.Fprintf(out, "--- sent by the service as %s, %d calls; fills %s by INSERT … SELECT without RETURNING "+
				"(Citus would write its rows with COPY, which row-level security refuses):\n%s\n\n",
				s.role, s.calls, strings.Join(copied, ", "), strings.TrimSpace(s.query))
		}
		unrouted := unroutedTables(s.query, tables)
		if len(unrouted) == 0 {
			continue
		}
		if slices.ContainsFunc(allowed, func(a allowance) bool { return a.matches(normalize(s.query)) }) {
			allowedSeen++
			continue
		}
		bad++
		where := "sent by the service"
		if !s.toplevel {
			where = "run in a function or trigger"
		}
		fmt.Fprintf(out, "--- %s as %s, %d calls; %s not tied to one facilitator:\n%s\n\n",
			where, s.role, s.calls, strings.Join(unrouted, ", "), strings.TrimSpace(s.query))
	}
	fmt.Fprintf(out, "routecheck: %d statements of the service's read; %d not routed to one facilitator, %d of them allowed\n",
		len(statements), bad+allowedSeen, allowedSeen)
	if bad > 0 {
		return errUnrouted
	}
	return nil
}

// perFacilitatorTables reads the tables of public and private with a
// facilitator_id (`server migrate --citus` distributes them all) from a
// database migrated for the purpose, and drops it. No name is in both.
func perFacilitatorTables(ctx context.Context, admin *pgx.Conn, adminURL string) (map[string]bool, error) {
	name := fmt.Sprintf("routecheck_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, `create database `+name); err != nil {
		return nil, err
	}
	defer admin.Exec(context.WithoutCancel(ctx), `drop database if exists `+name+` with (force)`)
	dbURL, err := url.Parse(adminURL)
	if err != nil || dbURL.Scheme == "" {
		return nil, fmt.Errorf("DATABASE_URL must be a postgres:// URL: %v", err)
	}
	dbURL.Path = "/" + name
	pool, err := postgres.Open(ctx, dbURL.String())
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `select c.relname::text from pg_class c
		where c.relnamespace in ('public'::regnamespace, 'private'::regnamespace) and c.relkind in ('r', 'p')
			and exists (select 1 from pg_attribute a
				where a.attrelid = c.oid and a.attname = 'facilitator_id' and a.attnum > 0 and not a.attisdropped)`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	tables := map[string]bool{}
	for _, n := range names {
		tables[n] = true
	}
	return tables, nil
}
