package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"mentormemory/mentor"
	"mentormemory/summarizer"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// generateFacilitator writes facilitator i's rows as the loader does.
func generateFacilitator(s Shape, i int) batch {
	l := &loader{shape: s, now: testNow, summarizer: summarizer.NewOffline()}
	var b batch
	l.generate(context.Background(), &b, i)
	return b
}

var testShape = Shape{Facilitators: 4, Archives: 6, TurnsPerArchive: 10, ActiveTurns: 10, Seed: 1}

// A loaded data set is reused by later runs, and figures are compared
// across revisions on it: the same seed must write the same data, today's
// included.
func TestConversationsAreTheSameForTheSameSeed(t *testing.T) {
	b := generateFacilitator(testShape, 0)
	if again := generateFacilitator(testShape, 0); !reflect.DeepEqual(b, again) {
		t.Fatal("the same seed wrote a different facilitator")
	}
	other := testShape
	other.Seed = 2
	if reflect.DeepEqual(b.turns, generateFacilitator(other, 0).turns) {
		t.Error("seeds 1 and 2 wrote the same turns")
	}
	if got, want := []any{b.learners[0][2], b.learners[1][2]}, []any{"Isabella", "Valentina"}; !reflect.DeepEqual(got, want) {
		t.Errorf("learners %v, want %v", got, want)
	}
	for k, want := range []string{
		"Valentina loves climbing but hates anything to do with spelling.",
		"One approach that often helps is a visual schedule. Before weekday, agree together on what bedtime will look like.",
	} {
		if got := b.turns[k].content; got != want {
			t.Errorf("turn %d of seed 1:\n got %q\nwant %q\n(a change of the generated text changes every loaded data set)", k, got, want)
		}
	}
}

func TestConversationsAreWellFormed(t *testing.T) {
	for i := range testShape.Facilitators {
		b := generateFacilitator(testShape, i)
		if len(b.learners) != 2 || len(b.archives) != testShape.Archives || len(b.convs) != 3 {
			t.Fatalf("facilitator %d: %d learners, %d archives, %d live conversations; want 2, %d, 3",
				i, len(b.learners), len(b.archives), len(b.convs), testShape.Archives)
		}
		archived := 0
		for k, turn := range b.turns {
			if turn.archive != nil {
				archived++
			}
			if strings.ContainsAny(turn.content, "{}") {
				t.Errorf("facilitator %d turn %d has an unfilled slot: %q", i, k, turn.content)
			}
			if !startsSentence(turn.content) {
				t.Errorf("facilitator %d turn %d does not start a sentence: %q", i, k, turn.content)
			}
		}
		if want := testShape.Archives * testShape.TurnsPerArchive; archived != want {
			t.Errorf("facilitator %d: %d archived turns, want %d", i, archived, want)
		}
	}
}

// A heavy tenant is a teacher with a class: every learner has a name of
// their own and a live conversation, and the archived conversations are
// spread over the general conversation and every learner.
func TestAHeavyTenantTalksAboutAWholeClass(t *testing.T) {
	h := HeavyShape{Archives: []int{400}, TurnsPerArchive: 4, Learners: 30}.tenants(1)[0]
	l := &loader{shape: h.shape, heavy: &h, now: testNow, summarizer: summarizer.NewOffline()}
	var b batch
	l.generate(context.Background(), &b, 0)
	names := map[any]bool{}
	for _, row := range b.learners {
		names[row[2]] = true
	}
	perScope := map[any]int{}
	for _, row := range b.archives {
		perScope[row[2]]++
	}
	if len(b.learners) != 30 || len(names) != 30 || len(b.convs) != 31 || len(b.archives) != 400 || len(perScope) != 31 {
		t.Errorf("%d learners with %d names, %d live conversations, %d archived over %d conversations; want 30, 30, 31, 400, 31",
			len(b.learners), len(names), len(b.convs), len(b.archives), len(perScope))
	}
	if general := perScope[nil]; general < 120 || general > 200 {
		t.Errorf("%d of 400 archived conversations are general, want about 40%%", general)
	}
	if b.users[0][3] != "heavy-400@bench.invalid" || b.ids[0] == testShape.facilitatorID(0) {
		t.Errorf("the heavy tenant is %v %v, not apart from the data set's facilitators", b.users[0][3], b.ids[0])
	}
}

func TestMemoriesAreTheSameForTheSameSeed(t *testing.T) {
	draw := func(seed uint64) []string {
		g := newMemoryGen(rand.New(rand.NewPCG(seed, memoryStream)), "Emma")
		var contents []string
		for range 200 {
			contents = append(contents, g.memory(testNow).content)
		}
		return contents
	}
	first := draw(1)
	if !reflect.DeepEqual(first, draw(1)) {
		t.Fatal("the same seed wrote different memories")
	}
	if reflect.DeepEqual(first, draw(2)) {
		t.Error("seeds 1 and 2 wrote the same memories")
	}
	for k, want := range []string{
		"Emma makes careless mistakes in spelling tests under time pressure.",
		"Emma struggles with decimals when the instructions are only spoken, ever since swimming started.",
		"Emma prefers short, step-by-step explanations, more than in German.",
	} {
		if first[k] != want {
			t.Errorf("memory %d of seed 1:\n got %q\nwant %q", k, first[k], want)
		}
	}
	seen := map[string]bool{}
	for _, c := range first {
		if strings.ContainsAny(c, "{}") || !startsSentence(c) {
			t.Errorf("malformed memory %q", c)
		}
		seen[c] = true
	}
	// The app merges a repeated fact into the memory it repeats.
	if len(seen) < 190 {
		t.Errorf("%d distinct memories of 200", len(seen))
	}
}

// The recall routes would fail mid-run if a message planned at the wrong
// depth; the message pools must keep matching mentor.PlanRetrieval.
func TestRecallMessagesPlanAtTheirDepth(t *testing.T) {
	var learners []memoryLearner
	for i := range 20 {
		g := newMemoryGen(rand.New(rand.NewPCG(1, memoryStream+uint64(i))), fmt.Sprint("Learner", i))
		learners = append(learners, memoryLearner{facilitator: &facilitator{}, id: fmt.Sprint(i),
			name: g.name, topic: g.topic(), lastMessage: g.liveMessage()})
	}
	if err := checkPlans(learners, lightMessages, mentor.RetrievalLight); err != nil {
		t.Error(err)
	}
	if err := checkPlans(learners, deepMessages, mentor.RetrievalDeep); err != nil {
		t.Error(err)
	}
}

func TestExchangesPostNewTurns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ex := newExchange(r, "Max")
	if ex[0].Role != mentor.RoleUser || ex[1].Role != mentor.RoleAssistant {
		t.Fatalf("roles %s, %s", ex[0].Role, ex[1].Role)
	}
	want := "Every school night we end up arguing about telling the time. Our dog Biscuit is the only one Max talks to when upsset. I tried reading together before bed but it only worked for a few days."
	if ex[0].Content != want {
		t.Errorf("parent's message of seed 1:\n got %q\nwant %q", ex[0].Content, want)
	}
	// The same stream again gives the same text but new client ids, so a
	// repeated run posts new turns rather than resends the service skips.
	again := newExchange(rand.New(rand.NewPCG(1, 2)), "Max")
	if again[0].Content != ex[0].Content || again[0].ID == ex[0].ID {
		t.Errorf("repeated exchange: same text %v, same id %v; want the text repeated and the id new",
			again[0].Content == ex[0].Content, again[0].ID == ex[0].ID)
	}
}

func TestParentsMistypeSomeWords(t *testing.T) {
	g := &textGen{r: rand.New(rand.NewPCG(3, 4))}
	text := strings.Repeat("homework bedtime fractions teacher ", 500)
	typed := g.typos(text)
	changed := 0
	for i, w := range strings.Fields(typed) {
		original := strings.Fields(text)[i]
		if w != original {
			changed++
			if w[0] != original[0] {
				t.Errorf("%q became %q: the first letter must stay", original, w)
			}
		}
	}
	// One word in fifty, of 2,000.
	if changed < 20 || changed > 60 {
		t.Errorf("%d of 2000 words mistyped, want about 40", changed)
	}
}

func startsSentence(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}
