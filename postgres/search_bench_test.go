package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"mentormemory/mentor"
	"mentormemory/postgres"
	"mentormemory/postgres/pgtest"
	"mentormemory/test/latency"
)

// BenchmarkSearch times a search as the API runs it (mentor.Service.Search:
// the question's time read, then one ranking statement), one at a time,
// for a facilitator with 100 archived conversations of 10 turns, held a
// week apart over two years, and 3 going on: by words alone, by words and
// a time, by a time alone, and a question that asks when, and reports the
// p50 and p99 of one search.
//
//	DATABASE_URL=... go test ./postgres -run '^$' -bench Search -benchtime 2000x
func BenchmarkSearch(b *testing.B) {
	pool := pgtest.NewPool(b)
	svc := offlineService(postgres.NewStore(pool, 50))
	id := uuid.NewString()
	if _, err := pool.Exec(b.Context(), `insert into auth.users (id) values ($1::uuid)`, id); err != nil {
		b.Fatal(err)
	}
	ctx := asFacilitator(b.Context(), id)
	var learners []*string
	for _, name := range []string{"Emma", "Max", "Ada"} {
		l, err := svc.AddLearner(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		learners = append(learners, &l.ID)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UTC()
	held := now.AddDate(-2, 0, 0)
	for i := range 103 {
		learner := learners[i%len(learners)]
		for turn := 0; turn < 10; turn += 2 {
			said := held.Add(time.Duration(turn) * time.Minute)
			posted := []mentor.Turn{
				{Role: mentor.RoleUser, Content: benchSentence(rng), CreatedAt: said},
				{Role: mentor.RoleAssistant, Content: benchSentence(rng), CreatedAt: said.Add(time.Minute)},
			}
			if _, err := svc.Update(ctx, learner, posted, false); err != nil {
				b.Fatal(err)
			}
		}
		// The last three stay going on.
		if i < 100 {
			if _, err := svc.Clear(ctx, learner); err != nil {
				b.Fatal(err)
			}
		}
		held = held.AddDate(0, 0, 7)
	}
	if _, err := pool.Exec(b.Context(), `vacuum analyze`); err != nil {
		b.Fatal(err)
	}

	for _, c := range []struct {
		name, question string
		limit          int
	}{
		{"words", "bedtime routine with the tablet", 0},
		{"words and a time", "bedtime routine with the tablet last month", 0},
		{"words and a day", "bedtime routine with the tablet on " + now.AddDate(-1, 0, 0).Format("2 January 2006"), 0},
		{"a time alone", "what did we talk about last week", 0},
		// A question that asks when reads each result's best turn for a
		// time; at the tool's five results it ranks twenty.
		{"when", "when did the bedtime routine with the tablet start", 0},
		{"words, five results", "bedtime routine with the tablet", 5},
		{"when, five results", "when did the bedtime routine with the tablet start", 5},
	} {
		b.Run(c.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				results, err := svc.Search(ctx, mentor.SearchQuery{Text: c.question, IncludeArchive: true, Limit: c.limit})
				if err != nil || len(results) == 0 {
					b.Fatalf("%q: %d results, %v", c.question, len(results), err)
				}
				times = append(times, time.Since(start))
			}
			latency.Report(b, "search", times)
		})
	}
}

var benchTopics = []string{"bedtime routine", "the tablet", "fractions homework", "reading aloud", "piano practice",
	"a meltdown after the game", "friends at recess", "the spelling test", "screen time", "the science fair",
	"long division", "swimming lessons", "the new teacher", "chores and allowance", "the dog"}

// benchSentence is a turn of a facilitator's everyday talk about two topics.
func benchSentence(rng *rand.Rand) string {
	return fmt.Sprintf("We talked about %s and %s again today; it went better than last time, and we will try again tomorrow.",
		benchTopics[rng.IntN(len(benchTopics))], benchTopics[rng.IntN(len(benchTopics))])
}
