package mentor_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
)

func user(content string) mentor.Turn { return mentor.Turn{Role: mentor.RoleUser, Content: content} }
func reply(content string) mentor.Turn {
	return mentor.Turn{Role: mentor.RoleAssistant, Content: content}
}

// logged numbers turns as the log of turns stores them, from first on.
func logged(first int64, turns ...mentor.Turn) []mentor.StoredTurn {
	stored := make([]mentor.StoredTurn, len(turns))
	for i, t := range turns {
		stored[i] = mentor.StoredTurn{LogID: first + int64(i), Turn: t}
	}
	return stored
}

func record(summary string, summarizedThrough int64, recent ...mentor.Turn) mentor.ConversationRecord {
	recentJSON, err := mentor.NewTurnsJSON(recent)
	if err != nil {
		panic(err)
	}
	return mentor.ConversationRecord{ID: "conv-1", Summary: summary, RecentTurns: recentJSON, SummarizedTurnID: summarizedThrough}
}

func TestSummaryIsWrittenFromScratchWhenAskedOrWhenThereIsNone(t *testing.T) {
	cases := []struct {
		summary    string
		regenerate bool
		want       bool
	}{
		{"", false, true},
		{"Ada reads.", true, true},
		{"Ada reads.", false, false},
	}
	for _, c := range cases {
		if got := mentor.SummaryFromScratch(record(c.summary, 4), c.regenerate); got != c.want {
			t.Errorf("summary %q, regenerate %v: from scratch %v, want %v", c.summary, c.regenerate, got, c.want)
		}
	}
}

func TestPlanSummaryFoldsTheTurnsNotCoveredIntoTheSummary(t *testing.T) {
	turns := logged(7, user("She read two chapters."), reply("Ask her about the ending."))
	job := mentor.PlanSummary(record("Ada reads.", 6), false, turns, "Ada", []string{"Ben"})
	if job == nil {
		t.Fatal("turns the summary does not cover left no job")
	}
	want := mentor.SummaryJob{ConversationID: "conv-1", ThroughTurnID: 8, Request: mentor.SummaryRequest{
		Previous: "Ada reads.", Turns: []mentor.Turn{turns[0].Turn, turns[1].Turn}, LearnerName: "Ada", OtherNames: []string{"Ben"},
	}}
	if job.ConversationID != want.ConversationID || job.ThroughTurnID != want.ThroughTurnID ||
		job.Request.Previous != want.Request.Previous || job.Request.LearnerName != want.Request.LearnerName ||
		!slices.Equal(job.Request.OtherNames, want.Request.OtherNames) || !slices.Equal(job.Request.Turns, want.Request.Turns) {
		t.Fatalf("job %+v, want %+v", *job, want)
	}
}

func TestPlanSummaryWritesAnewWithoutASummary(t *testing.T) {
	job := mentor.PlanSummary(record("", 0), false, logged(1, user("Hello there, how is Ada?")), "", nil)
	if job == nil || job.Request.Previous != "" || len(job.Request.Turns) != 1 || job.ThroughTurnID != 1 {
		t.Fatalf("job %+v, want a full summary of the one turn", job)
	}
}

func TestPlanSummaryLeavesACurrentSummaryAlone(t *testing.T) {
	if job := mentor.PlanSummary(record("Ada reads.", 8), false, nil, "Ada", nil); job != nil {
		t.Fatalf("no turns to summarize gave a job: %+v", *job)
	}
	// A summary that covers every turn of the segment, even an empty one
	// (turns with nothing worth keeping), is current.
	if job := mentor.PlanSummary(record("", 8), false, logged(7, user("hi"), reply("hi")), "", nil); job != nil {
		t.Fatalf("turns the summary covers gave a job: %+v", *job)
	}
}

func TestPlanSummaryRegeneratesTheWholeSegmentOnRequest(t *testing.T) {
	turns := logged(3, user("She read two chapters."), reply("Ask her about the ending."))
	job := mentor.PlanSummary(record("An old summary.", 4), true, turns, "Ada", nil)
	if job == nil {
		t.Fatal("regenerating a current summary gave no job")
	}
	if job.Request.Previous != "" || len(job.Request.Turns) != 2 || job.ThroughTurnID != 4 {
		t.Fatalf("job %+v, want the whole segment summarized from scratch through turn 4", *job)
	}
}

func TestUpdateRecordKeepsTheLastTenTurns(t *testing.T) {
	var before, added []mentor.Turn
	for i := range 8 {
		before = append(before, user(fmt.Sprint("old ", i)))
	}
	for i := range 4 {
		added = append(added, reply(fmt.Sprint("new ", i)))
	}
	update, changed, err := mentor.UpdateRecord(record("", 0, before...), added, nil)
	if err != nil || !changed {
		t.Fatalf("changed %v, %v; want the added turns written", changed, err)
	}
	recent, err := update.RecentTurns.Turns()
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(before[2:]), added...)
	if !slices.Equal(recent, want) {
		t.Fatalf("recent turns %v, want %v", recent, want)
	}
	if update.AddedTurns != 4 || update.AddedBytes != len("new 0\nnew 1\nnew 2\nnew 3") {
		t.Fatalf("added %d turns of %d bytes", update.AddedTurns, update.AddedBytes)
	}
	if update.Summary != nil || update.MarkStale {
		t.Fatalf("without a summary written the summary changed: %+v", update)
	}
}

// The span of time a conversation covers widens by the earliest and the
// latest of the turns added, whatever their order (imported history may
// come after later turns).
func TestUpdateRecordWidensTheConversationsTimeSpan(t *testing.T) {
	monday := time.Date(2023, time.December, 4, 18, 0, 0, 0, time.UTC)
	added := []mentor.Turn{user("b"), reply("c"), user("a")}
	added[0].CreatedAt, added[1].CreatedAt, added[2].CreatedAt = monday.Add(time.Hour), monday.Add(2*time.Hour), monday
	update, _, err := mentor.UpdateRecord(record("", 0), added, nil)
	if err != nil || !update.FirstTurnAt.Equal(monday) || !update.LastTurnAt.Equal(monday.Add(2*time.Hour)) {
		t.Fatalf("span %s – %s (%v), want %s – %s", update.FirstTurnAt, update.LastTurnAt, err, monday, monday.Add(2*time.Hour))
	}
	if update, _, _ := mentor.UpdateRecord(record("Old.", 3), nil, &mentor.InlineSummary{Summary: "New."}); !update.FirstTurnAt.IsZero() {
		t.Fatalf("no turn added, yet the span widens from %s", update.FirstTurnAt)
	}
}

func TestUpdateRecordWritesNothingWhenNothingHappened(t *testing.T) {
	if update, changed, err := mentor.UpdateRecord(record("Ada reads.", 3, user("q")), nil, nil); changed || err != nil {
		t.Fatalf("a post of resent turns writes %+v, %v", update, err)
	}
}

func TestUpdateRecordSavesTheSummaryWrittenInTheTransaction(t *testing.T) {
	job := mentor.SummaryJob{ConversationID: "conv-1", ThroughTurnID: 12}
	update, changed, err := mentor.UpdateRecord(record("Old.", 3), nil, &mentor.InlineSummary{Job: job, Summary: "New."})
	if err != nil || !changed {
		t.Fatalf("a regenerated summary is not written: %v, %v", changed, err)
	}
	if update.Summary == nil || *update.Summary != "New." || update.SummarizedTurnID != 12 || update.MarkStale {
		t.Fatalf("update %+v, want the summary New. through turn 12", update)
	}
}

func TestUpdateRecordMarksTheSummaryStaleWhenTheSummarizerFailed(t *testing.T) {
	job := mentor.SummaryJob{ConversationID: "conv-1", ThroughTurnID: 12}
	update, changed, err := mentor.UpdateRecord(record("Old.", 3), []mentor.Turn{user("q")},
		&mentor.InlineSummary{Job: job, Err: errors.New("summarizer down")})
	if err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	if !update.MarkStale || update.Summary != nil || update.SummarizedTurnID != 0 {
		t.Fatalf("update %+v, want the summary kept and marked stale", update)
	}
}

func TestUpdateRecordFailsOnUnreadableRecentTurns(t *testing.T) {
	broken := record("", 0)
	broken.RecentTurns = mentor.TurnsJSON(`{"not": "a list"}`)
	if _, _, err := mentor.UpdateRecord(broken, []mentor.Turn{user("q")}, nil); err == nil {
		t.Fatal("recent turns that do not decode were overwritten")
	}
}

func TestUnstoredAfterLinesThePostedTurnsUpWithTheLatestStored(t *testing.T) {
	stored := []mentor.Turn{user("q1"), reply("a1"), user("q2"), reply("a2")}
	cases := []struct {
		name   string
		latest []mentor.Turn
		posted []mentor.Turn
		want   []mentor.Turn
	}{
		{"nothing stored", nil, []mentor.Turn{user("q1"), reply("a1")}, []mentor.Turn{user("q1"), reply("a1")}},
		{"new exchange", stored, []mentor.Turn{user("q3"), reply("a3")}, []mentor.Turn{user("q3"), reply("a3")}},
		{"retry of the last exchange", stored, []mentor.Turn{user("q2"), reply("a2")}, nil},
		{"whole history plus a new exchange", stored, append(slices.Clone(stored), user("q3"), reply("a3")),
			[]mentor.Turn{user("q3"), reply("a3")}},
		{"whole history, nothing new", stored, stored, nil},
		{"history longer than the latest stored", stored[2:], append(slices.Clone(stored), user("q3")),
			[]mentor.Turn{user("q3")}},
		{"same words, other role", []mentor.Turn{user("ok")}, []mentor.Turn{reply("ok")}, []mentor.Turn{reply("ok")}},
	}
	for _, c := range cases {
		if got := mentor.UnstoredAfter(c.latest, c.posted); !slices.Equal(got, c.want) {
			t.Errorf("%s: unstored %v, want %v", c.name, got, c.want)
		}
	}
}

func TestUnstoredByIDNeedsTheSameIDRoleAndContent(t *testing.T) {
	withID := func(id string, turn mentor.Turn) mentor.Turn {
		turn.ID = id
		return turn
	}
	stored := []mentor.Turn{withID("1", user("q1")), withID("2", reply("a1"))}
	posted := []mentor.Turn{
		withID("1", user("q1")),       // stored
		withID("2", reply("another")), // an id the client used again
		withID("3", user("q2")),
		withID("3", user("q2")), // posted twice
	}
	want := []mentor.Turn{withID("2", reply("another")), withID("3", user("q2"))}
	if got := mentor.UnstoredByID(posted, stored); !slices.Equal(got, want) {
		t.Fatalf("unstored %v, want %v", got, want)
	}
}

func TestResentTurnsAreFoundByIDOnlyWhenEveryTurnHasOne(t *testing.T) {
	if !mentor.HaveClientIDs([]mentor.Turn{{ID: "1"}, {ID: "2"}}) {
		t.Error("turns that all have ids are not looked up by id")
	}
	if mentor.HaveClientIDs([]mentor.Turn{{ID: "1"}, {}}) {
		t.Error("turns with an id missing are looked up by id")
	}
}

// A summary job is small enough for the post's own transaction while its
// text (the summary so far and the turns) is an exchange or two, not more.
func TestOnlySmallSummaryJobsFitInline(t *testing.T) {
	const inlineLimit = 16 << 10
	turn := func(n int) mentor.Turn { return mentor.Turn{Role: mentor.RoleUser, Content: strings.Repeat("a", n)} }
	for _, tc := range []struct {
		job  mentor.SummaryJob
		fits bool
	}{
		{mentor.SummaryJob{Request: mentor.SummaryRequest{Previous: strings.Repeat("s", 2000), Turns: []mentor.Turn{turn(500), turn(800)}}}, true},
		{mentor.SummaryJob{Request: mentor.SummaryRequest{Turns: []mentor.Turn{turn(inlineLimit)}}}, true},
		{mentor.SummaryJob{Request: mentor.SummaryRequest{Previous: "s", Turns: []mentor.Turn{turn(inlineLimit)}}}, false},
		{mentor.SummaryJob{Request: mentor.SummaryRequest{Turns: []mentor.Turn{turn(10_000), turn(10_000)}}}, false},
	} {
		if got := tc.job.FitsInline(); got != tc.fits {
			t.Errorf("a job of %d turns and a %d-byte summary fits inline: %v, want %v",
				len(tc.job.Request.Turns), len(tc.job.Request.Previous), got, tc.fits)
		}
	}
}
