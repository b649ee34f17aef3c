package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
	"mentormemory/postgres"
)

// echoSummarizer summarizes by quoting the last turn, or fails with err.
type echoSummarizer struct{ err error }

func (echoSummarizer) Name() string { return "echo" }
func (s echoSummarizer) Summarize(_ context.Context, req mentor.SummaryRequest) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	return "Last: " + req.Turns[len(req.Turns)-1].Content, nil
}

// postTwice posts two exchanges to a new conversation through a store that
// runs summarizer inline, and returns the outcome of the second post.
func postTwice(t *testing.T, summarizer mentor.Summarizer) (mentor.Appended, *pgxpool.Pool) {
	t.Helper()
	pool, facilitator, learner := newLearnerDatabase(t)
	ctx := asFacilitator(context.Background(), facilitator)
	store := postgres.NewStore(pool, 50).WithInlineSummarizer(summarizer)
	var out mentor.Appended
	for _, n := range []string{"1", "2"} {
		out = mustAppend(t, ctx, store, &learner, apptest.Exchange("How is the reading going? "+n, "Ada read two chapters. "+n))
	}
	return out, pool
}

// A store with an inline summarizer brings the summary up to date in the
// post itself and leaves the service nothing to do.
func TestInlineSummarizerWritesTheSummaryInThePost(t *testing.T) {
	out, pool := postTwice(t, echoSummarizer{})
	if out.Job != nil || out.SummaryErr != nil {
		t.Fatalf("the post left summary job %+v, error %v; want the summary written", out.Job, out.SummaryErr)
	}
	if out.Conversation.Summary != "Last: Ada read two chapters. 2" || out.Conversation.SummaryStale {
		t.Fatalf("summary %q (stale %v), want the second exchange's", out.Conversation.Summary, out.Conversation.SummaryStale)
	}
	var summarized, newest int64
	if err := pool.QueryRow(context.Background(), `select summarized_turn_id, (select max(id) from public.conversation_turns)
		from public.conversation_updates where id = $1::uuid`, out.Conversation.ID).Scan(&summarized, &newest); err != nil {
		t.Fatal(err)
	}
	if summarized != newest {
		t.Fatalf("the summary covers turns through %d, want through the newest, %d", summarized, newest)
	}
}

// When the inline summarizer fails, the turns are stored all the same, the
// summary is marked stale, and the failure is handed back to be logged.
func TestInlineSummarizerFailureMarksTheSummaryStale(t *testing.T) {
	broken := errors.New("summarizer broke")
	out, _ := postTwice(t, echoSummarizer{err: broken})
	if !errors.Is(out.SummaryErr, broken) || out.Job != nil {
		t.Fatalf("the post handed back error %v and job %+v; want the summarizer's failure and no job", out.SummaryErr, out.Job)
	}
	if out.Added != 2 || out.Conversation.TurnCount != 4 || !out.Conversation.SummaryStale || out.Conversation.Summary != "" {
		t.Fatalf("added %d, conversation %+v; want 4 turns stored and the summary stale", out.Added, out.Conversation)
	}
}

// A post with much text to summarize leaves its summary for after the
// commit, even with an inline summarizer: the post's transaction, which
// holds the conversation's lock, never reads a long segment to summarize.
func TestLargeSummaryIsLeftForAfterTheCommit(t *testing.T) {
	pool, facilitator, learner := newLearnerDatabase(t)
	ctx := asFacilitator(context.Background(), facilitator)
	store := postgres.NewStore(pool, 50).WithInlineSummarizer(echoSummarizer{})
	turns := make([]mentor.Turn, 40)
	for i := range turns {
		turns[i] = mentor.Turn{Role: []string{mentor.RoleUser, mentor.RoleAssistant}[i%2], Content: strings.Repeat("Reading with Ada. ", 30)}
	}
	out := mustAppend(t, ctx, store, &learner, turns)
	if out.Job == nil || out.Added != 40 {
		t.Fatalf("added %d, job %+v: want the 40 turns stored and the summary left to the service", out.Added, out.Job)
	}
}
