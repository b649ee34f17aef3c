package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/postgres"
)

// On Citus, migrating and distributing a database takes about 15 s, most
// of it Citus passing each statement on to the workers and creating the
// shards. So a test process builds one template, a database of the same
// name on the coordinator and on every worker, migrated and distributed as
// NewDatabase's are, and each test's database is a copy of it on every
// node (CREATE DATABASE … TEMPLATE, a second or two). A copy on the
// coordinator names the same workers, and reaches the copy of the same
// name there. The template is the process's, named after nothing else:
// its lock, shared, is held by a connection the process keeps open until
// it ends, and the next process to build one drops every template whose
// lock nobody holds, its own process gone.

// citusTemplatePrefix begins the name of every test process's template.
const citusTemplatePrefix = "mentor_citus_template_"

// citusTemplateLockClass is the first key of a template's lock; the second
// is the hash of its name.
const citusTemplateLockClass = 7_361_902

// citusTemplate is this process's template, built by the first test that
// needs it.
var citusTemplate struct {
	sync.Mutex
	name string
	err  error
	// keeper holds the template's lock for as long as the process runs.
	keeper *pgx.Conn
}

// newCitusDatabase creates the database name on every node as a copy of
// the process's template, building the template first if it is not built
// yet (newDatabase holds createLockKey). The copy is then given the
// settings Distribute gives a database, which are the database's, not its
// contents', and are not copied.
func newCitusDatabase(ctx context.Context, adminURL, dbURL, name string) error {
	template, err := citusTemplateDatabase(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("the template: %w", err)
	}
	for _, nodeURL := range citusNodeURLs(adminURL) {
		if err := execOn(ctx, nodeURL, `create database `+name+` template `+template); err != nil {
			return err
		}
	}
	return buildOn(ctx, dbURL, postgres.Distribute)
}

// citusTemplateDatabase returns the name of the process's template,
// building it the first time.
func citusTemplateDatabase(ctx context.Context, adminURL string) (string, error) {
	citusTemplate.Lock()
	defer citusTemplate.Unlock()
	if citusTemplate.name != "" || citusTemplate.err != nil {
		return citusTemplate.name, citusTemplate.err
	}
	name, err := buildCitusTemplate(ctx, adminURL)
	citusTemplate.name, citusTemplate.err = name, err
	return name, err
}

// buildCitusTemplate drops the templates of processes that ended, then
// builds this process's: created on every node, migrated and distributed,
// then closed to connections, so that it can be copied.
func buildCitusTemplate(ctx context.Context, adminURL string) (string, error) {
	// Not bound to ctx: the connection lives as long as the process.
	keeper, err := pgx.Connect(context.WithoutCancel(ctx), adminURL)
	if err != nil {
		return "", err
	}
	citusTemplate.keeper = keeper
	if err := dropEndedCitusTemplates(ctx, keeper, adminURL); err != nil {
		return "", fmt.Errorf("drop the templates of ended test processes: %w", err)
	}
	name := citusTemplatePrefix + randomHex(6)
	if _, err := keeper.Exec(ctx, `select pg_advisory_lock_shared($1, hashtext($2))`,
		int32(citusTemplateLockClass), name); err != nil {
		return "", err
	}
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		return "", err
	}
	if err := execOn(ctx, adminURL, `create database `+name); err != nil {
		return "", err
	}
	if err := addCitusNodes(ctx, adminURL, dbURL, name, citusWorkers()); err != nil {
		return "", err
	}
	if err := buildOn(ctx, dbURL, postgres.Migrate, postgres.Distribute); err != nil {
		return "", err
	}
	// A database is copied only while no one is connected to it: Citus's
	// own daemons are, on every node, and come back only for a connection.
	for _, nodeURL := range citusNodeURLs(adminURL) {
		if err := execOn(ctx, nodeURL, `alter database `+name+` with allow_connections false`,
			`select pg_terminate_backend(pid) from pg_stat_activity where datname = '`+name+`'`); err != nil {
			return "", err
		}
	}
	return name, nil
}

// dropEndedCitusTemplates drops, from every node, the templates whose lock
// no process holds.
func dropEndedCitusTemplates(ctx context.Context, conn *pgx.Conn, adminURL string) error {
	rows, err := conn.Query(ctx, `select datname::text from pg_database where starts_with(datname, $1)`, citusTemplatePrefix)
	if err != nil {
		return err
	}
	templates, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var errs []error
	for _, template := range templates {
		var unused bool
		if err := conn.QueryRow(ctx, `select pg_try_advisory_lock($1, hashtext($2))`,
			int32(citusTemplateLockClass), template).Scan(&unused); err != nil {
			return err
		}
		if !unused {
			continue
		}
		errs = append(errs, dropDatabases(ctx, adminURL, template))
		if _, err := conn.Exec(ctx, `select pg_advisory_unlock($1, hashtext($2))`,
			int32(citusTemplateLockClass), template); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// citusNodeURLs are the admin URLs of the coordinator, adminURL, and of
// its workers.
func citusNodeURLs(adminURL string) []string {
	urls := []string{adminURL}
	for _, w := range citusWorkers() {
		u, err := url.Parse(adminURL)
		if err != nil {
			continue // addCitusNodes says why first
		}
		u.Host = w
		urls = append(urls, u.String())
	}
	return urls
}

// OnCitus says whether the tests run on Citus (PGTEST_CITUS_WORKERS).
func OnCitus() bool {
	return len(citusWorkers()) > 0
}

// SkipOnCitus skips the test on Citus, saying why: limitation names what
// Citus cannot do that the test needs. Only for what the service does not
// do on Citus, or cannot (README "Running on Citus").
func SkipOnCitus(tb testing.TB, limitation string) {
	tb.Helper()
	if OnCitus() {
		tb.Skip("on Citus: " + limitation)
	}
}

// LockWaitsSQL is a statement counting the sessions of the current
// database that wait for a lock, as Postgres tells. On Citus a statement
// waits on the worker that holds the row, where the coordinator does not
// look: citus_lock_waits gathers the waits of every node, by the
// distributed transaction waiting.
func LockWaitsSQL() string {
	if OnCitus() {
		return `select count(distinct waiting_gpid) from citus_lock_waits`
	}
	return `select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
}

// citusWorkers are the host:port of the Citus worker nodes the tests use,
// none for a plain Postgres.
func citusWorkers() []string {
	var workers []string
	for _, w := range strings.Split(os.Getenv("PGTEST_CITUS_WORKERS"), ",") {
		if w = strings.TrimSpace(w); w != "" {
			workers = append(workers, w)
		}
	}
	return workers
}

// addCitusNodes makes the database name, created on the coordinator at
// adminURL, a Citus database with the workers: it is created on each
// worker, gets the citus extension on every node, and the coordinator
// knows itself and its workers. Nothing without workers.
func addCitusNodes(ctx context.Context, adminURL, dbURL, name string, workers []string) error {
	if len(workers) == 0 {
		return nil
	}
	coordinator, err := url.Parse(adminURL)
	if err != nil {
		return fmt.Errorf("PGTEST_CITUS_WORKERS needs DATABASE_URL as a URL: %w", err)
	}
	for _, w := range workers {
		worker := *coordinator
		worker.Host = w
		if err := execOn(ctx, worker.String(), `create database `+name); err != nil {
			return fmt.Errorf("worker %s: %w", w, err)
		}
		worker.Path = "/" + name
		if err := execOn(ctx, worker.String(), `create extension citus`); err != nil {
			return fmt.Errorf("worker %s: %w", w, err)
		}
	}
	// Few shards: a test holds a few rows, and each shard is a table on a
	// worker that distributing creates.
	statements := []string{`create extension citus`, `alter database ` + name + ` set citus.shard_count = 4`,
		fmt.Sprintf(`select citus_set_coordinator_host('%s', %s)`, coordinator.Hostname(), coordinator.Port())}
	for _, w := range workers {
		host, port, _ := strings.Cut(w, ":")
		statements = append(statements, fmt.Sprintf(`select citus_add_node('%s', %s)`, host, port))
	}
	return execOn(ctx, dbURL, statements...)
}

// execOn runs the statements, one at a time, on a connection of its own.
func execOn(ctx context.Context, connString string, statements ...string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// dropDatabases drops the database name from every node. On Citus each node's daemon reaches the database on the
// others (to finish prepared transactions), which brings the node's own
// daemon back to it: every node refuses connections to the database
// before any drops it, and a drop that finds a daemon still there is tried
// again, for a few seconds.
func dropDatabases(ctx context.Context, adminURL, name string) error {
	var nodes []*pgx.Conn
	var errs []error
	for _, nodeURL := range citusNodeURLs(adminURL) {
		conn, err := pgx.Connect(ctx, nodeURL)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defer conn.Close(ctx)
		nodes = append(nodes, conn)
		var exists bool
		err = conn.QueryRow(ctx, `select exists (select from pg_database where datname = $1)`, name).Scan(&exists)
		if err == nil && exists {
			_, err = conn.Exec(ctx, `alter database `+name+` with allow_connections false`)
		}
		errs = append(errs, err)
	}
	for _, conn := range nodes {
		for attempt := 1; ; attempt++ {
			_, err := conn.Exec(ctx, `drop database if exists `+name+` with (force)`)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == objectInUse && attempt < 20 {
				time.Sleep(250 * time.Millisecond)
				continue
			}
			errs = append(errs, err)
			break
		}
	}
	return errors.Join(errs...)
}

// objectInUse is Postgres's refusal to drop a database someone is
// connected to.
const objectInUse = "55006"
