package mentor

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// thursday is when the learner's first session took place.
var thursday = time.Date(2026, 3, 5, 16, 0, 0, 0, time.UTC)

func memoryAt(id string, at time.Time, t MemoryType, content string, metadata Metadata) LearnerMemory {
	if metadata == nil {
		metadata = Metadata{}
	}
	return LearnerMemory{ID: id, Type: t, Content: content, Metadata: metadata, Source: SourceExtracted,
		Status: StatusCurrent, CreatedAt: at}
}

// Alex's first two sessions, as extraction stores them: Thursday's, then
// Monday's.
func alexAfterTwoSessions() []LearnerMemory {
	monday := thursday.Add(96 * time.Hour)
	return []LearnerMemory{
		memoryAt("test-friday", thursday, Context, "Alex has a quadratics test on Friday", Metadata{"topic": "quadratics"}),
		memoryAt("games", thursday, Personal, "Alex plays basketball; games are on Fridays", Metadata{"topic": "basketball"}),
		memoryAt("confused", thursday, Academic, "Alex confused the discriminant with the leading coefficient",
			Metadata{"topic": "discriminant", "valence": "negative", "resolution": "unresolved"}),
		memoryAt("connected", thursday.Add(time.Minute), Academic, "Alex connected the discriminant to the shape of the graph",
			Metadata{"topic": "discriminant", "valence": "positive", "resolution": "resolved"}),
		memoryAt("square-next", thursday.Add(2*time.Minute), Context, "Completing the square is next: the session ran out of time for it",
			Metadata{"next_topic": "completing the square"}),
		memoryAt("after-dinner", thursday.Add(3*time.Minute), Personal, "Alex usually studies after dinner", nil),
		memoryAt("solved", monday, Academic, "Alex solved completing the square correctly on the first try",
			Metadata{"topic": "completing the square", "valence": "positive", "resolution": "resolved"}),
		memoryAt("dinner-again", monday.Add(time.Minute), Personal, "Alex usually studies right after dinner", nil),
		memoryAt("division", thursday, Academic, "Alex struggles with long division", Metadata{"topic": "division"}),
		memoryAt("division-now", monday.Add(2*time.Minute), Academic, "Alex no longer struggles with long division", Metadata{"topic": "division"}),
	}
}

func TestOfflineConsolidationKeepsMemoryTrue(t *testing.T) {
	memories := alexAfterTwoSessions()
	friday := thursday.Add(8 * 24 * time.Hour)
	plan := ConsolidateOffline(memories, friday)
	if err := plan.Validate(memories); err != nil {
		t.Fatalf("the offline plan is invalid: %v\n%+v", err, plan)
	}

	expired := map[string]string{}
	for _, e := range plan.Expiries {
		expired[e.ID] = e.Reason
	}
	if !strings.HasPrefix(expired["test-friday"], "past: Friday was Friday 6 March") {
		t.Errorf("the Friday test, a week later: %q, want it expired as past", expired["test-friday"])
	}
	if expired["square-next"] != "finished: solved" {
		t.Errorf("the thread taken up later: %q, want it finished by the later memory", expired["square-next"])
	}
	if _, ok := expired["games"]; ok {
		t.Error("a routine on Fridays expired")
	}
	if !slices.Equal(plan.Resolutions, []Resolution{{ID: "confused", By: "connected"}}) {
		t.Errorf("resolutions %+v, want the discriminant struggle settled by the breakthrough", plan.Resolutions)
	}
	if !slices.Equal(plan.Supersessions, []Supersession{{Old: "division", New: "division-now"}}) {
		t.Errorf("supersessions %+v, want the division struggle replaced by its negation", plan.Supersessions)
	}
	if len(plan.Merges) != 1 || plan.Merges[0].Keep != "after-dinner" || !slices.Equal(plan.Merges[0].Absorbed, []string{"dinner-again"}) {
		t.Errorf("merges %+v, want the two after-dinner memories as one", plan.Merges)
	}
	if c := plan.Counts(); c["expired"] != 2 || c["resolved"] != 1 || c["superseded"] != 1 || c["merged"] != 1 {
		t.Errorf("counts %v", c)
	}

	// The same memories on the Thursday itself: the test is still ahead.
	early := ConsolidateOffline(memories[:1], thursday.Add(time.Hour))
	if len(early.Expiries) != 0 {
		t.Errorf("a test tomorrow expired: %+v", early.Expiries)
	}
}

// A person's words are kept over the extractor's, and two memories a
// person wrote are never merged.
func TestOfflineConsolidationKeepsAPersonsWords(t *testing.T) {
	extracted := memoryAt("extracted", thursday, Personal, "Max has a dog called Biscuit", nil)
	added := memoryAt("added", thursday.Add(time.Hour), Personal, "Max has a dog called Biscuit at home", nil)
	added.Source = SourceAdded
	plan := ConsolidateOffline([]LearnerMemory{extracted, added}, thursday.Add(48*time.Hour))
	if len(plan.Merges) != 1 || plan.Merges[0].Keep != "added" {
		t.Fatalf("merges %+v, want the person's memory kept", plan.Merges)
	}
	extracted.Source = SourceAdded
	if plan := ConsolidateOffline([]LearnerMemory{extracted, added}, thursday.Add(48*time.Hour)); len(plan.Merges) != 0 {
		t.Fatalf("two memories a person wrote were merged: %+v", plan.Merges)
	}
}

// A plan, from a model or the rules, must fit the memories it was made from.
func TestConsolidationPlanValidation(t *testing.T) {
	memories := alexAfterTwoSessions()
	for _, tc := range []struct {
		name string
		plan ConsolidationPlan
		want string
	}{
		{"unknown id", ConsolidationPlan{Expiries: []Expiry{{ID: "nope"}}}, `unknown memory "nope"`},
		{"two changes", ConsolidationPlan{Expiries: []Expiry{{ID: "games"}}, Resolutions: []Resolution{{ID: "games", By: "solved"}}},
			`memory "games" takes part in two changes`},
		{"replaced by a memory going away", ConsolidationPlan{Supersessions: []Supersession{{Old: "division", New: "division-now"}},
			Expiries: []Expiry{{ID: "division-now"}}}, `memory "division-now" replaces or settles another and goes away itself`},
		{"an empty merge", ConsolidationPlan{Merges: []Merge{{Keep: "games"}}}, `merge into "games" absorbs nothing`},
	} {
		if err := tc.plan.Validate(memories); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	added := slices.Clone(memories)
	added[5].Source, added[7].Source = SourceAdded, SourceAdded
	merge := ConsolidationPlan{Merges: []Merge{{Keep: "after-dinner", Absorbed: []string{"dinner-again"}}}}
	if err := merge.Validate(added); err == nil || !strings.Contains(err.Error(), "both were written by a person") {
		t.Errorf("a merge of two memories a person wrote: %v", err)
	}
}

// An opening made on Thursday and read on Monday no longer offers
// Friday's test as a thread left open, nor greets with it.
func TestOpeningDropsThreadsWhoseDayHasPassed(t *testing.T) {
	o := Opening{ComputedAt: thursday, UnfinishedThreads: []string{"Alex has a quadratics test on Friday", "Completing the square"},
		WelcomeHook: leftOffWith + "Alex has a quadratics test on Friday"}
	friday := o.ForDay(thursday.Add(24 * time.Hour))
	if len(friday.UnfinishedThreads) != 2 {
		t.Fatalf("read on the Friday itself: %v", friday.UnfinishedThreads)
	}
	monday := o.ForDay(thursday.Add(96 * time.Hour))
	if !slices.Equal(monday.UnfinishedThreads, []string{"Completing the square"}) || monday.WelcomeHook != "Picking up from last time." {
		t.Fatalf("read on Monday: %v, %q", monday.UnfinishedThreads, monday.WelcomeHook)
	}
}
