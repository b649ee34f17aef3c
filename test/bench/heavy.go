package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/summarizer"
	"mentormemory/test/textgen"
)

// Heavy tenants are facilitators with a long history, loaded beside the
// data set and measured apart, one size at a time: a teacher with a class
// of 30 who talks about them every school day reaches 5,000 to 10,000
// archived conversations in a year. What grows with history (search reads
// a facilitator's conversations) shows when the same requests are made to
// tenants of 100, 1,000 and 10,000 archived conversations of the same
// shape. They are loaded once each, and a load with other sizes adds
// them without reloading anything else.

// HeavyShape is the heavy tenants' shape: one facilitator per size in
// Archives, each with Learners learners and archived conversations of
// TurnsPerArchive turns.
type HeavyShape struct {
	Archives        []int
	TurnsPerArchive int
	Learners        int
}

func (h HeavyShape) validate() error {
	for _, n := range h.Archives {
		if n < 1 || n > 20_000 {
			return fmt.Errorf("heavy tenant of %d archived conversations: out of range (1..20,000)", n)
		}
	}
	if len(h.Archives) > 0 && (h.TurnsPerArchive < 2 || h.TurnsPerArchive > 500 || h.Learners < 2 || h.Learners > len(learnerNames)) {
		return fmt.Errorf("heavy tenants of %d turns per archived conversation and %d learners: out of range (2..500, 2..%d)",
			h.TurnsPerArchive, h.Learners, len(learnerNames))
	}
	return nil
}

// heavyTenant is one heavy tenant: the shape of its single facilitator.
type heavyTenant struct {
	shape    Shape
	learners int
}

func (h HeavyShape) tenants(seed uint64) []heavyTenant {
	var list []heavyTenant
	for _, n := range h.Archives {
		list = append(list, heavyTenant{
			shape:    Shape{Facilitators: 1, Archives: n, TurnsPerArchive: h.TurnsPerArchive, ActiveTurns: 10, Seed: seed},
			learners: h.Learners,
		})
	}
	return list
}

// heavyShapePrefix names heavy tenants in bench.loads, and heavyEmailPrefix
// their users, apart from the data set's.
const (
	heavyShapePrefix = "heavy-"
	heavyEmailPrefix = "heavy-"
)

// String names the tenant in bench.loads. (A marker left by a tenant of
// another shape is harmless: its user is gone, so it is not taken for
// loaded.)
func (h heavyTenant) String() string {
	return fmt.Sprintf("%s%s-l%d", heavyShapePrefix, h.shape, h.learners)
}

func (h heavyTenant) email() string {
	return fmt.Sprintf("%s%d%s", heavyEmailPrefix, h.shape.Archives, benchEmailDomain)
}

func (h heavyTenant) tenant() tenant {
	id := uuid.NewSHA1(benchNamespace, fmt.Appendf(nil, "heavy/%s", h))
	return tenant{id: id, email: h.email(), learners: h.learners, stream: uint64(h.shape.Archives)}
}

// loadHeavyTenants loads the heavy tenants that are not loaded yet. A
// tenant of the same size but another shape is deleted first.
func loadHeavyTenants(ctx context.Context, pool *pgxpool.Pool, h HeavyShape, seed uint64) error {
	loadedAny := false
	for _, ht := range h.tenants(seed) {
		who := ht.tenant()
		seconds, marked, err := finishedLoad(ctx, pool, ht.String())
		if err != nil {
			return err
		}
		var present bool
		if err := pool.QueryRow(ctx, `select exists (select from auth.users where id = $1::uuid)`, who.id.String()).Scan(&present); err != nil {
			return err
		}
		if marked && present {
			logf("heavy tenant %s already loaded (in %.1f s); reusing it", ht, seconds)
			continue
		}
		if _, err := pool.Exec(ctx, `delete from auth.users where email = $1 and id <> $2::uuid`, who.email, who.id.String()); err != nil {
			return fmt.Errorf("deleting the heavy tenant of another shape: %w", err)
		}

		started := time.Now()
		logf("loading heavy tenant %s: %d archived conversations × %d turns, %d learners, in one transaction",
			ht, ht.shape.Archives, ht.shape.TurnsPerArchive, ht.learners)
		l := &loader{pool: pool, shape: ht.shape, heavy: &ht, now: time.Now().UTC().Truncate(time.Second),
			summarizer: summarizer.NewOffline(), progress: progress{of: "heavy tenants", total: 1}}
		if err := l.loadBatch(ctx, []int{0}); err != nil {
			return fmt.Errorf("heavy tenant %s: %w", ht, err)
		}
		if err := markLoaded(ctx, pool, ht.String(), 1, time.Since(started), false); err != nil {
			return err
		}
		logf("heavy tenant %s loaded in %.1f s", ht, time.Since(started).Seconds())
		loadedAny = true
	}
	if loadedAny {
		start := time.Now()
		if _, err := pool.Exec(ctx, `vacuum (analyze)`); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		logf("VACUUM (ANALYZE) took %.1f s", time.Since(start).Seconds())
	}
	return nil
}

// heavyFacilitators reads the loaded heavy tenants by their size.
func heavyFacilitators(ctx context.Context, admin *pgxpool.Pool) (map[int]*facilitator, error) {
	list, err := facilitatorsByEmail(ctx, admin, heavyEmailPrefix+"%"+benchEmailDomain)
	if err != nil {
		return nil, err
	}
	bySize := map[int]*facilitator{}
	for _, f := range list {
		size, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(f.email, heavyEmailPrefix), benchEmailDomain))
		if err != nil {
			return nil, fmt.Errorf("heavy tenant %s: %w", f.email, err)
		}
		bySize[size] = f
	}
	return bySize, nil
}

// heavyRouteGroup selects every heavy tenant's routes in -routes.
const heavyRouteGroup = "heavy"

// heavyRoutes are the routes measured against one tenant each, smallest
// first: search (with the archive, as the search route) and GET of the
// general conversation, keyed search-N and get-N for the tenant of N
// archived conversations.
func heavyRoutes(base string, heavy map[int]*facilitator) []*route {
	sizes := make([]int, 0, len(heavy))
	for n := range heavy {
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	var routes []*route
	for _, n := range sizes {
		f := heavy[n]
		routes = append(routes, &route{
			key: fmt.Sprintf("search-%d", n), name: fmt.Sprintf("GET search (include_archive), %d archived", n),
			target: 20 * time.Millisecond, warm: true, heavy: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				return searchArchive(base, f.token, textgen.Pick(r, searchQueries))
			},
			check: checkSearch,
		}, &route{
			key: fmt.Sprintf("get-%d", n), name: fmt.Sprintf("GET conversation (general), %d archived", n),
			target: 5 * time.Millisecond, warm: true, heavy: true,
			request: func(_ *rand.Rand, _ int64) (*http.Request, error) { return getMemory(base, f.token, nil) },
			check:   checkConversation,
		})
	}
	return routes
}
