package searchquality

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
	"mentormemory/summarizer"
)

// A long history: search reads a bounded number of a facilitator's
// archived conversations (postgres/search.go), so a long history could
// bury the answer that a search reading everything would find. This run
// adds to every account, after the labelled set, many more archived
// conversations of the same people (sessions drawn from other seeds of
// the same accounts: the same learners, the same kinds of facts, other
// details), asks the questions again, and compares the service with a
// copy of BM25 that reads every conversation (alternatives_test.go).
// It takes a few minutes, so it runs only when asked:
//
//	SEARCHQUALITY_HISTORY=1000 scripts/test.sh ./test/searchquality -run TestSearchQuality -v
var historyFlag = flag.Int("searchquality.history", 0,
	"also measure with this many more archived conversations per account (or SEARCHQUALITY_HISTORY=N)")

func history(t *testing.T) int {
	if env := os.Getenv("SEARCHQUALITY_HISTORY"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 0 {
			t.Fatalf("SEARCHQUALITY_HISTORY: %q is not a number of conversations", env)
		}
		return n
	}
	return *historyFlag
}

// measureLongHistory archives n more conversations for every account and
// adds the service's outcomes and the exhaustive copy's to results, under
// the names it returns.
func measureLongHistory(t *testing.T, svc *service, d *Dataset, accounts []*account, rowSession map[string]string,
	n int, results map[string][]outcome) []string {
	t.Helper()
	ctx := context.Background()
	started := time.Now()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	offline := summarizer.NewOffline()
	// Each account is the same persona in every seed's set, so its other
	// seeds' sessions talk about the same learners.
	err := forEachAccount(accounts, func(a *account) error {
		i := accountIndex(d, a)
		added := 0
		for seed := d.Seed + 1; added < n; seed++ {
			other := Generate(seed, nil).Facilitators[i]
			var batch pgx.Batch
			for _, sess := range other.Sessions {
				if added == n {
					break
				}
				turns, archivedAt, err := archivedTurns(sess, today)
				if err != nil {
					return err
				}
				summary, err := offline.Summarize(ctx, mentor.SummaryRequest{Turns: turns, LearnerName: sess.Learner})
				if err != nil {
					return err
				}
				raw, err := json.Marshal(turns)
				if err != nil {
					return err
				}
				// Written as the archiving trigger writes a conversation.
				batch.Queue(`insert into public.conversation_history_archive
					(facilitator_id, learner_id, summary, conversation_turns, turn_count, archived_at)
					values ($1::uuid, $2::uuid, $3, $4::jsonb, $5, $6)`,
					a.id, a.learnerID(sess.Learner), summary, string(raw), len(turns), archivedAt)
				added++
			}
			if err := svc.pool.SendBatch(ctx, &batch).Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// As autovacuum leaves the archive: its words' index merged, its
	// statistics fresh.
	if _, err := svc.pool.Exec(ctx, `vacuum analyze public.conversation_history_archive, public.archive_term_stats`); err != nil {
		t.Fatal(err)
	}
	loaded := time.Now()

	service, _, err := askAll(svc, d, accounts, rowSession)
	if err != nil {
		t.Fatal(err)
	}
	archived := archivedAt(t, svc.pool)
	exhaustive := make([]outcome, len(d.Questions))
	var mu sync.Mutex
	err = forEachAccount(accounts, func(a *account) error {
		r := &ranker{pool: svc.pool, me: a.id, archived: archived, asCaller: true}
		for qi, q := range d.Questions {
			if q.Facilitator != a.f.Key {
				continue
			}
			ids, err := r.rank(ctx, current, q.Text)
			if err != nil {
				return fmt.Errorf("%s: %w", q.ID, err)
			}
			top := make([]string, len(ids))
			for j, id := range ids {
				top[j] = rowSession[id]
			}
			mu.Lock()
			exhaustive[qi] = newOutcome(q, top)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("long history: %d more archived conversations per account in %.1fs, asked in %.1fs",
		n, loaded.Sub(started).Seconds(), time.Since(loaded).Seconds())

	names := []string{fmt.Sprintf("service, +%d each", n), fmt.Sprintf("all read, +%d each", n)}
	results[names[0]], results[names[1]] = service, exhaustive
	return names
}

func accountIndex(d *Dataset, a *account) int {
	for i := range d.Facilitators {
		if d.Facilitators[i].Key == a.f.Key {
			return i
		}
	}
	panic("no facilitator " + a.f.Key)
}

// archivedTurns is a session's turns as an archived conversation holds
// them, each with the time it was said, and when it was archived: a minute
// after its last turn.
func archivedTurns(sess Session, today time.Time) ([]mentor.Turn, time.Time, error) {
	turns := make([]mentor.Turn, len(sess.Turns))
	for i, turn := range sess.Turns {
		turns[i] = mentor.Turn{ID: turn.ID, Role: turn.Role, Content: turn.Content, CreatedAt: sess.TurnTime(today, i)}
	}
	if len(turns) == 0 {
		return nil, time.Time{}, fmt.Errorf("session %s has no turns", sess.ID)
	}
	return turns, turns[len(turns)-1].CreatedAt.Add(time.Minute), nil
}
