// Package simulator runs transcript files through the whole memory pipeline,
// turn by turn, and logs what the mentor would have had in mind: recall
// before each reply, the exchange saved, the memories extracted from it,
// the closing state when a session ends and the opening prepared for the
// next one. It shows, on real transcripts, whether what was learnt in one
// session comes back where it matters in a later one.
package simulator

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"mentormemory/extractor"
	"mentormemory/mentor"
)

// RecordedFixture is the extraction fixture for simulator/samples/
// student-alex, replayed when no model key is configured.
//
//go:embed fixtures/student-alex.json
var RecordedFixture []byte

// RecordedFixtureName names the fixture in the log.
const RecordedFixtureName = "simulator/fixtures/student-alex.json"

// Pipeline is the service under simulation.
type Pipeline struct {
	Service *mentor.Service
	// RunJobs runs the queued background jobs to completion, so that each
	// exchange's memories are learnt before the next message.
	RunJobs func(ctx context.Context) error
	// Consolidate, when set, runs the consolidation a learner's session's
	// end queued, and logs what it changed.
	Consolidate func(ctx context.Context, name string, learnerID *string) error
}

// Options configure a run.
type Options struct {
	// Clock is the simulated time: its start is the first session's; each
	// session starts SessionGap after the previous one, and each exchange
	// takes a minute.
	Clock      *Clock
	SessionGap time.Duration
	Out        io.Writer
}

// Clock is the simulation's time, shared with the LoggingExtractor.
type Clock struct{ now time.Time }

func NewClock(start time.Time) *Clock { return &Clock{now: start} }

func (c *Clock) Now() time.Time { return c.now }

// Session is one transcript file: the turns and the learner each turn is
// about ("" for the general conversation).
type Session struct {
	Name  string
	Turns []mentor.Turn
	// Learners holds, for each turn, the learner's name or "".
	Learners []string
}

var sessionFile = regexp.MustCompile(`^session_(\d+)\.json$`)

// LoadDir reads the session_N.json files of dir in the order of N. It
// understands both sample formats: [{"speaker": "Student"|"AI", "text"}]
// (a learner talking with the mentor; the learner is named after the
// directory) and [{"role", "content", "learner"}].
func LoadDir(dir string) ([]Session, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type numbered struct {
		n    int
		name string
	}
	var files []numbered
	for _, e := range entries {
		if m := sessionFile.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			files = append(files, numbered{n, e.Name()})
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no session_N.json files", dir)
	}
	slices.SortFunc(files, func(a, b numbered) int { return a.n - b.n })
	student := learnerFromDir(dir)
	var sessions []Session
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, err
		}
		var lines []struct {
			Speaker string  `json:"speaker"`
			Text    string  `json:"text"`
			Role    string  `json:"role"`
			Content string  `json:"content"`
			Learner *string `json:"learner"`
		}
		if err := json.Unmarshal(raw, &lines); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		s := Session{Name: f.name}
		for i, l := range lines {
			t := mentor.Turn{Role: l.Role, Content: l.Content}
			learner := ""
			if l.Learner != nil {
				learner = *l.Learner
			}
			if l.Speaker != "" {
				t = mentor.Turn{Role: mentor.RoleAssistant, Content: l.Text}
				if l.Speaker != "AI" {
					t.Role = mentor.RoleUser
				}
				learner = student
			}
			if t.Role != mentor.RoleUser && t.Role != mentor.RoleAssistant || strings.TrimSpace(t.Content) == "" {
				return nil, fmt.Errorf("%s: line %d is neither a speaker/text nor a role/content turn", f.name, i+1)
			}
			s.Turns = append(s.Turns, t)
			s.Learners = append(s.Learners, learner)
		}
		sessions = append(sessions, s)
	}
	return sessions, nil
}

// learnerFromDir names the learner of a student-NAME directory.
func learnerFromDir(dir string) string {
	base := filepath.Base(filepath.Clean(dir))
	base = strings.TrimPrefix(base, "student-")
	if base == "" {
		return "Learner"
	}
	return strings.ToUpper(base[:1]) + base[1:]
}

// run is one simulation's state: the simulated clock and the learners.
type run struct {
	p        Pipeline
	opts     Options
	learners map[string]*string // name → id; "" → nil
}

// Run simulates the sessions in order, as the caller in ctx.
func Run(ctx context.Context, p Pipeline, sessions []Session, opts Options) error {
	if opts.SessionGap <= 0 {
		opts.SessionGap = 72 * time.Hour
	}
	r := &run{p: p, opts: opts, learners: map[string]*string{"": nil}}
	start := opts.Clock.now
	for i, s := range sessions {
		opts.Clock.now = start.Add(time.Duration(i) * opts.SessionGap)
		if err := r.session(ctx, i+1, s); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

func (r *run) logf(tag, format string, args ...any) {
	fmt.Fprintf(r.opts.Out, "[%s] [%s] %s\n", r.opts.Clock.now.Format("2006-01-02 15:04"), tag, fmt.Sprintf(format, args...))
}

func (r *run) learner(ctx context.Context, name string) (*string, error) {
	if id, ok := r.learners[name]; ok {
		return id, nil
	}
	l, err := r.p.Service.AddLearner(ctx, name)
	if err != nil {
		return nil, err
	}
	r.learners[name] = &l.ID
	return &l.ID, nil
}

func (r *run) session(ctx context.Context, n int, s Session) error {
	r.logf("SESSION", "=== Session %d (%s, %d turns, %s) ===", n, s.Name, len(s.Turns), r.opts.Clock.now.Weekday())
	opened := map[string]bool{}
	for i := 0; i < len(s.Turns); {
		// An exchange is the person's message and the mentor's replies.
		j := i + 1
		for j < len(s.Turns) && s.Turns[j].Role == mentor.RoleAssistant && s.Learners[j] == s.Learners[i] {
			j++
		}
		name := s.Learners[i]
		learnerID, err := r.learner(ctx, name)
		if err != nil {
			return err
		}
		if !opened[name] {
			opened[name] = true
			if err := r.opening(ctx, name, learnerID); err != nil {
				return err
			}
		}
		if s.Turns[i].Role == mentor.RoleUser {
			if err := r.retrieve(ctx, s.Turns[i].Content, learnerID); err != nil {
				return err
			}
		}
		result, err := r.p.Service.Update(ctx, learnerID, s.Turns[i:j], false)
		if err != nil {
			return err
		}
		r.logf("SAVE", "%s: stored %d new turns (%d in the active conversation)", who(name), result.Added, result.Conversation.TurnCount)
		if err := r.p.RunJobs(ctx); err != nil {
			return err
		}
		r.opts.Clock.now = r.opts.Clock.now.Add(time.Minute)
		i = j
	}
	for name := range opened {
		if err := r.end(ctx, name); err != nil {
			return err
		}
		if r.p.Consolidate != nil {
			if err := r.p.Consolidate(ctx, who(name), r.learners[name]); err != nil {
				return err
			}
		}
	}
	return nil
}

func who(name string) string {
	if name == "" {
		return "general"
	}
	return name
}

func (r *run) opening(ctx context.Context, name string, learnerID *string) error {
	o, err := r.p.Service.OpeningContext(ctx, learnerID, r.opts.Clock.now)
	if err != nil {
		return err
	}
	if o == nil {
		r.logf("OPENING", "%s: no earlier session, nothing precomputed", who(name))
		return nil
	}
	r.logf("OPENING", "%s: welcome hook: %s", who(name), o.WelcomeHook)
	if o.LastEmotionalState != "" {
		r.logf("OPENING", "%s: last emotional state: %s", who(name), o.LastEmotionalState)
	}
	for _, t := range o.UnfinishedThreads {
		r.logf("OPENING", "%s: unfinished thread: %s", who(name), t)
	}
	for _, p := range o.PersonalRelevance {
		r.logf("OPENING", "%s: relevant today: %s", who(name), p)
	}
	r.logf("OPENING", "%s: suggested opener: %s", who(name), o.SuggestedOpener)
	return nil
}

func (r *run) retrieve(ctx context.Context, message string, learnerID *string) error {
	recall, err := r.p.Service.RecallContext(ctx, learnerID, message, mentor.MemoryFilter{})
	if err != nil {
		return err
	}
	r.logf("RETRIEVAL", "Message: %q", message)
	r.logf("RETRIEVAL", "Mode: %s (%s)", recall.Retrieval.Mode, strings.Join(recall.Retrieval.Reasons, "; "))
	groups := []struct {
		label string
		ms    []mentor.RecalledMemory
	}{
		{"academic", recall.Academic}, {"personal", recall.Personal}, {"preferences", recall.Preferences},
		{"context", recall.Context}, {"emotional patterns", recall.EmotionalPatterns},
	}
	var parts []string
	for _, g := range groups {
		if len(g.ms) == 0 {
			continue
		}
		contents := make([]string, len(g.ms))
		for i, m := range g.ms {
			contents[i] = m.Content
		}
		parts = append(parts, g.label+": "+strings.Join(contents, " | "))
	}
	if len(parts) == 0 {
		r.logf("RETRIEVAL", "Results: nothing that bears on the message")
		return nil
	}
	r.logf("RETRIEVAL", "Results: %s", strings.Join(parts, "; "))
	return nil
}

func (r *run) end(ctx context.Context, name string) error {
	ended, err := r.p.Service.EndSession(ctx, r.learners[name])
	if err != nil {
		return err
	}
	c := ended.Closing
	r.logf("CLOSING", "%s: final emotional arc: %s", who(name), orNone(strings.Join(c.EmotionalArc, " → ")))
	r.logf("CLOSING", "%s: key moments: %s", who(name), orNone(strings.Join(c.KeyMoments, " | ")))
	r.logf("CLOSING", "%s: new memories: %d", who(name), len(c.NewMemories))
	r.logf("CLOSING", "%s: next-session hooks: %s", who(name), orNone(strings.Join(c.NextSessionHooks, " | ")))
	r.logf("CLOSING", "%s: goodbye: %s", who(name), c.GoodbyeLine)
	r.logf("OPENING CACHE", "Stored for %s: %s", who(name), orNone(ended.Opening.WelcomeHook))
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// LoggingExtractor logs every memory an extractor returns, so the log shows
// what each exchange taught.
type LoggingExtractor struct {
	Inner mentor.Extractor
	Out   io.Writer
	Clock *Clock
}

func (l LoggingExtractor) Name() string { return l.Inner.Name() }

func (l LoggingExtractor) Extract(ctx context.Context, req mentor.ExtractionRequest) ([]mentor.NewMemory, error) {
	found, err := l.Inner.Extract(ctx, req)
	stamp := l.Clock.Now().Format("2006-01-02 15:04")
	if err != nil {
		fmt.Fprintf(l.Out, "[%s] [EXTRACTION] failed (will be retried): %v\n", stamp, err)
		return nil, err
	}
	for i, m := range found {
		emotion := ""
		if e := m.Metadata.Emotion(); e != "" {
			emotion = ", emotion: " + e
		}
		fmt.Fprintf(l.Out, "[%s] [EXTRACTION] Memory %d: {type: %s, content: %q, importance: %.2f%s}\n",
			stamp, i+1, m.Type, m.Content, m.Importance, emotion)
	}
	return found, nil
}

// Fixture returns the recorded extraction fixture.
func Fixture() (*extractor.Fixture, error) {
	return extractor.ParseFixture(RecordedFixture, RecordedFixtureName)
}
