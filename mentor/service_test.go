package mentor_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"mentormemory/mentor"
)

// postStore answers a post with appended and records what it was asked.
type postStore struct {
	mentor.Store
	appended mentor.Appended
	asked    mentor.AppendRequest
	stale    []mentor.SummaryJob
}

func (s *postStore) AppendTurns(_ context.Context, req mentor.AppendRequest) (mentor.Appended, error) {
	s.asked = req
	return s.appended, nil
}

func (s *postStore) MarkSummaryStale(_ context.Context, job mentor.SummaryJob) (mentor.ConversationRecord, error) {
	s.stale = append(s.stale, job)
	return mentor.ConversationRecord{ID: job.ConversationID, SummaryStale: true}, nil
}

// failingSummarizer fails every summary.
type failingSummarizer struct{ calls int }

func (*failingSummarizer) Name() string { return "failing" }
func (f *failingSummarizer) Summarize(context.Context, mentor.SummaryRequest) (string, error) {
	f.calls++
	return "", errors.New("model unavailable")
}

func TestUpdateLogsTheFailureOfTheSummaryWrittenInTheStore(t *testing.T) {
	store := &postStore{appended: mentor.Appended{
		Added: 2, Conversation: mentor.ConversationRecord{ID: "conv-1", SummaryStale: true},
		SummaryErr: errors.New("summarizer broke"),
	}}
	var logged bytes.Buffer
	summarizer := &failingSummarizer{}
	svc := mentor.NewService(store, summarizer, slog.New(slog.NewTextHandler(&logged, nil)))
	learner := "l-1"
	result, err := svc.Update(context.Background(), &learner, []mentor.Turn{user(" How was school? "), reply("Fine.")}, true)
	if err != nil {
		t.Fatal(err)
	}
	if line := logged.String(); !strings.Contains(line, "level=WARN") || !strings.Contains(line, "summarizer broke") {
		t.Fatalf("the summarizer's failure was not logged: %q", line)
	}
	if !result.Conversation.SummaryStale || result.Added != 2 || summarizer.calls != 0 {
		t.Fatalf("result %+v after %d summarizer calls; want the store's outcome and no second summary", result, summarizer.calls)
	}
	asked := store.asked
	if asked.LearnerID != &learner || !asked.Regenerate || len(asked.Turns) != 2 || asked.Turns[0].Content != "How was school?" {
		t.Fatalf("the store was asked %+v, want the learner's validated turns and the regeneration", asked)
	}
}

func TestUpdateMarksTheSummaryStaleWhenTheSummarizerFailsAfterTheCommit(t *testing.T) {
	job := mentor.SummaryJob{ConversationID: "conv-1", ThroughTurnID: 9}
	store := &postStore{appended: mentor.Appended{Added: 1, Job: &job, Conversation: mentor.ConversationRecord{ID: "conv-1"}}}
	var logged bytes.Buffer
	summarizer := &failingSummarizer{}
	svc := mentor.NewService(store, summarizer, slog.New(slog.NewTextHandler(&logged, nil)))
	result, err := svc.Update(context.Background(), nil, []mentor.Turn{user("How was school?")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if summarizer.calls != 1 || len(store.stale) != 1 || store.stale[0].ThroughTurnID != 9 || !result.Conversation.SummaryStale {
		t.Fatalf("after %d summarizer calls, stale marks %+v, result %+v; want the job's summary marked stale",
			summarizer.calls, store.stale, result)
	}
	if !strings.Contains(logged.String(), "model unavailable") {
		t.Fatalf("the summarizer's failure was not logged: %q", logged.String())
	}
}
