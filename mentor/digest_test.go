package mentor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mentormemory/mentor"
	"mentormemory/tokens"
)

func TestASessionsSummarySaysHowItWentWhatWasLearntAndWhatIsNext(t *testing.T) {
	start := time.Date(2026, 3, 2, 16, 0, 0, 0, time.UTC)
	closing := mentor.ClosingState{
		Exchanges:        9,
		EmotionalArc:     []string{"anxious", "frustrated", "excited"},
		KeyMoments:       []string{`Alex said "Oh! So that's why the graph looks different!"`},
		NewMemories:      []string{"Alex has a quadratics test on Friday."},
		NextSessionHooks: []string{"Next time we'll try completing the square."},
	}
	got := mentor.SummarizeSession(closing, start, start.Add(35*time.Minute))
	want := `Monday 2 March, 9 exchanges over 35 minutes. Feelings: anxious → frustrated → excited. ` +
		`Breakthrough: Alex said "Oh! So that's why the graph looks different!" Learnt: Alex has a quadratics test on Friday. ` +
		`Left for next time: Next time we'll try completing the square.`
	if got != want {
		t.Fatalf("summary\n got %s\nwant %s", got, want)
	}
	if quiet := mentor.SummarizeSession(mentor.ClosingState{Exchanges: 1}, start, start); quiet != "Monday 2 March, 1 exchange over under a minute." {
		t.Fatalf("a session with nothing in it: %s", quiet)
	}
}

// session is an ended session of the digest's tests, ended days before now.
func session(id string, daysAgo int, now time.Time, closing mentor.ClosingState) mentor.EndedSession {
	ended := now.AddDate(0, 0, -daysAgo)
	return mentor.EndedSession{ID: id, StartedAt: ended.Add(-30 * time.Minute), EndedAt: ended, Closing: closing,
		Summary: mentor.SummarizeSession(closing, ended.Add(-30*time.Minute), ended)}
}

func TestTheDigestNamesWhatRecursAndWhereThingsStand(t *testing.T) {
	now := time.Date(2026, 3, 16, 12, 0, 0, 0, time.UTC) // a Monday
	s1, s2, s3 := "s1", "s2", "s3"
	sessions := []mentor.EndedSession{ // latest first
		session(s3, 1, now, mentor.ClosingState{Exchanges: 6, EmotionalArc: []string{"frustrated", "excited"},
			KeyMoments: []string{"Alex solved three on his own!"}, NextSessionHooks: []string{"Next time we'll try word problems."}}),
		session(s2, 4, now, mentor.ClosingState{Exchanges: 4, EmotionalArc: []string{"frustrated"}}),
		// No breakthrough reported, but one learnt.
		session(s1, 8, now, mentor.ClosingState{Exchanges: 5, EmotionalArc: []string{"anxious", "excited"}}),
	}
	current := []mentor.LearnerMemory{
		{ID: "a", Type: mentor.Academic, Content: "Alex struggles with fractions", Confidence: 0.9, SessionID: &s1,
			Metadata: mentor.Metadata{"topic": "fractions", "resolution": "unresolved"}},
		{ID: "b", Type: mentor.Academic, Content: "Alex mixes up numerators and denominators", Confidence: 0.7, SessionID: &s3,
			Metadata: mentor.Metadata{"topic": "fractions", "resolution": "unresolved"}},
		{ID: "c", Type: mentor.Personal, Content: "Alex has a dog named Max", Confidence: 0.7, SessionID: &s2,
			Metadata: mentor.Metadata{"topic": "pets"}},
		{ID: "e", Type: mentor.Academic, Content: "Alex added fractions with pizza slices", Confidence: 0.8, SessionID: &s1,
			Metadata: mentor.Metadata{"topic": "adding fractions", "valence": "positive"}},
		// A thread whose day passed is not what is next.
		{ID: "d", Type: mentor.Context, Content: "Alex has a fractions quiz on Friday", Confidence: 0.7, SessionID: &s1,
			CreatedAt: now.AddDate(0, 0, -8), Metadata: mentor.Metadata{"next_topic": "quiz"}},
	}
	d := mentor.BuildDigest(sessions, current, mentor.DigestTokenBudget, tokens.Count, now)

	if !slices.Equal(d.Sessions, []string{s3, s2, s1}) {
		t.Fatalf("sessions %v, want the latest first", d.Sessions)
	}
	wantThemes := []string{
		"Fractions came up in 2 of the last 3 sessions.",
		"Felt frustrated in 2 of the last 3 sessions.",
		"Felt excited in 2 of the last 3 sessions.",
		"A breakthrough in 2 of the last 3 sessions.",
	}
	if !slices.Equal(d.Themes, wantThemes) {
		t.Fatalf("themes\n got %q\nwant %q", d.Themes, wantThemes)
	}
	wantStanding := []string{
		"The last session, Sunday 15 March, ended excited.",
		"Still working on: Alex struggles with fractions; Alex mixes up numerators and denominators.",
		"Next: Next time we'll try word problems.",
	}
	if !slices.Equal(d.Standing, wantStanding) {
		t.Fatalf("standing\n got %q\nwant %q", d.Standing, wantStanding)
	}
	if len(d.Recent) != 3 || !strings.HasPrefix(d.Recent[0], "Sunday 15 March, 6 exchanges") {
		t.Fatalf("a line per session, latest first: %q", d.Recent)
	}
	if d.Tokens != tokens.Count(d.Markdown()) || !strings.HasPrefix(d.Markdown(), "## The last 3 sessions\n\n### Where things stand\n") {
		t.Fatalf("tokens %d of:\n%s", d.Tokens, d.Markdown())
	}
	if empty := mentor.BuildDigest(nil, current, mentor.DigestTokenBudget, tokens.Count, now); len(empty.Sessions) != 0 || empty.Markdown() != "" {
		t.Fatalf("the digest of no session: %+v", empty)
	}
}

// However long the sessions' summaries, the digest keeps within its
// budget, reads at most five sessions, and keeps where things stand.
func TestTheDigestKeepsWithinItsBudget(t *testing.T) {
	now := time.Date(2026, 3, 16, 12, 0, 0, 0, time.UTC)
	var sessions []mentor.EndedSession
	for i := range 8 {
		var learnt []string
		for j := range 10 {
			learnt = append(learnt, fmt.Sprintf("Alex described the %d-th way a long division problem %d can go wrong in detail", j, i))
		}
		sessions = append(sessions, session(fmt.Sprintf("s%d", i), i+1, now, mentor.ClosingState{Exchanges: 20,
			EmotionalArc: []string{"frustrated", "confused", "excited"}, KeyMoments: []string{"Alex said he gets it now"}, NewMemories: learnt}))
	}
	d := mentor.BuildDigest(sessions, nil, mentor.DigestTokenBudget, tokens.Count, now)
	if d.Tokens > mentor.DigestTokenBudget || d.Tokens != tokens.Count(d.Markdown()) {
		t.Fatalf("%d tokens, budget %d", d.Tokens, mentor.DigestTokenBudget)
	}
	if len(d.Sessions) != mentor.DigestSessions || len(d.Standing) == 0 || len(d.Recent) == 0 || len(d.Recent) == len(d.Sessions) {
		t.Fatalf("over budget, the oldest sessions' lines go first and where things stand stays: %+v", d)
	}
	if !strings.Contains(d.Recent[0], "Sunday 15 March") {
		t.Fatalf("the latest session's line went: %q", d.Recent)
	}
	// A budget not even the heading fits in leaves the heading alone.
	if tiny := mentor.BuildDigest(sessions, nil, 2, tokens.Count, now); len(tiny.Standing)+len(tiny.Themes)+len(tiny.Recent) != 0 {
		t.Fatalf("a budget of 2 tokens: %+v", tiny)
	}
}
