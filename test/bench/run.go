package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/auth"
	"mentormemory/mentor"
	"mentormemory/postgres"
)

// facilitator is a benchmark user with a token and the conversations GET,
// search and POST may address.
type facilitator struct {
	id       string
	email    string
	token    string
	learners []string
	names    []string
}

// Run measures the routes one after the other, on the loaded data set, and
// reports them: a table on stdout, and the same as Markdown in c.Out.
func Run(ctx context.Context, c RunConfig, stdout io.Writer) error {
	if err := c.validate(); err != nil {
		return err
	}
	env, results, err := measureRoutes(ctx, c)
	if err != nil {
		return err
	}
	return report(stdout, env, c, results)
}

// measureRoutes serves the app and measures each route c selects.
func measureRoutes(ctx context.Context, c RunConfig) (*environment, []*result, error) {
	admin, err := postgres.Open(ctx, c.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	defer admin.Close()

	facilitators, err := benchFacilitators(ctx, admin)
	if err != nil {
		return nil, nil, err
	}
	if err := vacuumDatabase(ctx, admin); err != nil {
		return nil, nil, err
	}
	cfg, serverEnv, err := benchConfig(c.DatabaseURL, nil)
	if err != nil {
		return nil, nil, err
	}
	served, err := startServerProcess(ctx, serverEnv, c.ServerLog, c.CPUProfile, c.Concurrency)
	if err != nil {
		return nil, nil, err
	}
	defer served.stop()
	client, base := served.client, served.base

	env, err := describe(ctx, admin, "its own process (bench serve: app.New as cmd/server builds it; settled summaries parsed for search before measuring)", served.info, cfg, c.DatabaseURL, len(facilitators))
	if err != nil {
		return nil, nil, err
	}
	localDB, err := databaseIsLocal(ctx, admin)
	if err != nil {
		return nil, nil, err
	}

	routes := benchRoutes(base, facilitators)
	if c.Archiving > 0 {
		// Primed only when its turn comes, so that the plain POST route
		// before it cannot archive the primed conversations first.
		routes = append(routes, &route{key: "post-archive", name: archivingRouteName, prepare: func() (*route, error) {
			primed, err := primeForArchiving(ctx, admin, facilitators, min(c.Archiving, len(facilitators)), cfg.Database.ArchiveTurns, c.Seed)
			if err != nil {
				return nil, fmt.Errorf("priming conversations for the archiving route: %w", err)
			}
			return archivingRoute(base, primed), nil
		}})
	}

	learners, err := benchMemoryLearners(ctx, admin, facilitators)
	if err != nil {
		return nil, nil, err
	}
	if len(learners) == 0 && c.Routes == "" {
		logf("no learner memories loaded (bench load -memories): recall and opening are left out")
	} else {
		routes = append(routes, memoryRoutes(ctx, admin, base, learners)...)
	}

	heavy, err := heavyFacilitators(ctx, admin)
	if err != nil {
		return nil, nil, err
	}
	routes = append(routes, heavyRoutes(base, heavy)...)

	// Without -routes, every route of the data set; the heavy tenants'
	// only when asked for.
	keep := strings.Split(c.Routes, ",")
	routes = slices.DeleteFunc(routes, func(rt *route) bool {
		if c.Routes == "" {
			return rt.heavy
		}
		return !slices.Contains(keep, rt.key) && !(rt.heavy && slices.Contains(keep, heavyRouteGroup))
	})
	if len(routes) == 0 {
		return nil, nil, fmt.Errorf("-routes %q selects nothing (%s; %s, search-N and get-N for the heavy tenants loaded)",
			c.Routes, strings.Join(RouteKeys, ", "), heavyRouteGroup)
	}
	var results []*result
	for _, rt := range routes {
		if rt.prepare != nil {
			if rt, err = rt.prepare(); err != nil {
				return nil, nil, err
			}
		}
		if rt.warm {
			logf("%s: warming up (%s or %d requests)", rt.name, c.Warmup, c.WarmupRequests)
			measure(ctx, client, rt, c.Concurrency, c.Warmup, c.WarmupRequests, c.Seed+1000)
		}
		limit := c.Requests
		if rt.limit > 0 {
			limit = min(limit, rt.limit)
		}
		logf("%s: measuring (%s or %d requests)", rt.name, c.Duration, limit)
		before := sampleCPU(ctx, admin, localDB, served.pid)
		res := measure(ctx, client, rt, c.Concurrency, c.Duration, limit, c.Seed)
		res.cpu = cpuBetween(before, sampleCPU(ctx, admin, localDB, served.pid))
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		logf("%s: %d requests, p50 %s, p99 %s, %d errors", rt.name, res.count,
			ms(res.percentile(0.50)), ms(res.percentile(0.99)), res.errors)
		results = append(results, res)
		if rt.writes {
			if err := vacuumDatabase(ctx, admin); err != nil {
				return nil, nil, err
			}
		}
	}
	return env, results, nil
}

// benchFacilitators reads the loaded data set's facilitators and their
// learners.
func benchFacilitators(ctx context.Context, admin *pgxpool.Pool) ([]*facilitator, error) {
	list, err := facilitatorsByEmail(ctx, admin, "bench-%"+benchEmailDomain)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errors.New("no benchmark data in this database: run `bench load` first")
	}
	return list, nil
}

// facilitatorsByEmail reads the facilitators whose email is like pattern,
// with their learners and a token each.
func facilitatorsByEmail(ctx context.Context, admin *pgxpool.Pool, pattern string) ([]*facilitator, error) {
	rows, err := admin.Query(ctx, `select u.id::text, u.email,
			coalesce(array_agg(l.id::text order by l.created_at, l.id) filter (where l.id is not null), '{}'),
			coalesce(array_agg(l.name order by l.created_at, l.id) filter (where l.id is not null), '{}')
		from auth.users u
		left join public.learners l on l.facilitator_id = u.id
		where u.email like $1
		group by u.id
		order by u.id`, pattern)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*facilitator, error) {
		var f facilitator
		return &f, row.Scan(&f.id, &f.email, &f.learners, &f.names)
	})
	if err != nil {
		return nil, err
	}
	for _, f := range list {
		if len(f.learners) == 0 {
			return nil, fmt.Errorf("facilitator %s has no learners: the data set is incomplete", f.id)
		}
		if f.token, err = auth.MintHS256(benchSecret, f.id, "", 2*time.Hour); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// vacuumDatabase settles what earlier runs wrote. Their posts left dead
// row versions behind (each post rewrites its conversation's row twice and
// archiving rewrites 50 turns) and added turns and archived conversations
// the statistics do not count yet. Autovacuum would catch up in time; doing
// it now makes every run start from a settled state instead of measuring
// the last run's leftovers, or autovacuum catching up mid-measurement.
func vacuumDatabase(ctx context.Context, admin *pgxpool.Pool) error {
	start := time.Now()
	if _, err := admin.Exec(ctx, `vacuum (analyze)`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	logf("vacuumed and analyzed the database in %.1f s", time.Since(start).Seconds())
	return nil
}

// The answers are checked by looking for `"key":value` in the body rather
// than decoding it: the clients share the CPU with the app and Postgres, and
// decoding every answer cost a tenth of this process's CPU. A quote inside
// a JSON string is escaped, so such a match is never part of a text.

type primedConversation struct {
	facilitator string
	token       string
}

// primeForArchiving fills the general conversations of n facilitators up to
// the archive limit, as superuser, so that the next post to each archives a
// segment. The filler turns are summarized already (summarized_turn_id), as
// they would be after normal updates.
func primeForArchiving(ctx context.Context, admin *pgxpool.Pool, fs []*facilitator, n, limit int, seed uint64) ([]primedConversation, error) {
	r := rand.New(rand.NewPCG(seed, 7))
	chosen := slices.Clone(fs)
	r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
	chosen = chosen[:n]
	ids := make([]string, n)
	for i, f := range chosen {
		ids[i] = f.id
	}

	start := time.Now()
	tx, err := admin.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The same limit the app's transactions use, so the update below stops
	// exactly at it without archiving.
	if _, err := tx.Exec(ctx, `select set_config('mentor.archive_turns', $1, true)`, strconv.Itoa(limit)); err != nil {
		return nil, err
	}
	counts, err := countsByKey(ctx, tx, `select facilitator_id::text, turn_count from public.conversation_updates
		where facilitator_id = any($1::uuid[]) and learner_id is null`, ids)
	if err != nil {
		return nil, err
	}

	var fill [][]any
	now := time.Now().Add(-time.Hour)
	g := &textGen{r: r}
	for _, f := range chosen {
		c, ok := counts[f.id]
		if !ok {
			return nil, fmt.Errorf("facilitator %s has no general conversation", f.id)
		}
		t := g.newTopic()
		for k := c; k < limit; k++ {
			role := mentor.RoleUser
			if k%2 == 1 {
				role = mentor.RoleAssistant
			}
			fid := uuid.MustParse(f.id)
			fill = append(fill, []any{fid, role, g.turn(role, t, "", 10), randomUUID(r).String(),
				now.Add(time.Duration(k) * time.Minute)})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"public", "conversation_turns"},
		[]string{"facilitator_id", "role", "content", "client_turn_id", "created_at"}, pgx.CopyFromRows(fill)); err != nil {
		return nil, err
	}
	// Count the active turns rather than trust arithmetic, so turn_count
	// keeps its invariant even on a data set earlier runs changed.
	tag, err := tx.Exec(ctx, `update public.conversation_updates c
		set turn_count = x.n, summarized_turn_id = x.last_id, recent_turns = x.recent, updated_at = now()
		from (
			select t.facilitator_id, count(*)::integer as n, max(t.id) as last_id,
				(select jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', r.client_turn_id, 'role', r.role,
						'content', r.content, 'created_at', r.created_at)) order by r.id)
					from (select * from public.conversation_turns r
						where r.facilitator_id = t.facilitator_id and r.learner_id is null and r.archive_id is null
							and r.id > `+archivedThrough("t.facilitator_id", "'"+nilLearner+"'::uuid")+`
						order by r.id desc limit 10) r) as recent
			from public.conversation_turns t
			where t.facilitator_id = any($1::uuid[]) and t.learner_id is null and t.archive_id is null
				and t.id > `+archivedThrough("t.facilitator_id", "'"+nilLearner+"'::uuid")+`
			group by t.facilitator_id
		) x
		where c.facilitator_id = x.facilitator_id and c.learner_id is null and x.n = $2`, ids, limit)
	if err != nil {
		return nil, err
	}
	if int(tag.RowsAffected()) != n {
		return nil, fmt.Errorf("primed %d conversations, want %d", tag.RowsAffected(), n)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	logf("primed %d general conversations to %d active turns (%d turns added) in %.1f s",
		n, limit, len(fill), time.Since(start).Seconds())

	primed := make([]primedConversation, n)
	for i, f := range chosen {
		primed[i] = primedConversation{facilitator: f.id, token: f.token}
	}
	return primed, nil
}
