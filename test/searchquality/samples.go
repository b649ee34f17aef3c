package searchquality

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SampleSet is one folder of simulator/samples, read as sessions, with the
// hand-written questions about it.
type SampleSet struct {
	Name      string
	Sessions  []Session
	Questions []SampleQuestion
}

// SampleQuestion is a question whose answer is in the sample file Source.
type SampleQuestion struct {
	Source   string
	Text     string
	Evidence string
}

// sampleSets says how each folder is read: its turn format, and the
// learner a student's own transcript belongs to (a student using a
// parent's account is that parent's learner).
var sampleSets = []struct {
	name, learner string
	files         []string
}{
	{name: "facilitator-dana", files: []string{"session_1.json", "session_2.json", "session_3.json"}},
	{name: "student-alex", learner: "Alex", files: []string{"session_1.json", "session_2.json", "session_3.json"}},
}

// sampleQuestions are asked about the samples; none copies its answer.
var sampleQuestions = []SampleQuestion{
	{"facilitator-dana/session_1.json", "What were the four steps in the division chant?", "A short chant helps many kids: divide, multiply, subtract, bring down."},
	{"facilitator-dana/session_1.json", "which multiplication facts is Emma shaky on", "Her multiplication facts are solid up to 7, shaky on 8 and 9."},
	{"facilitator-dana/session_2.json", "How many days a week do we homeschool?", "We homeschool four days a week."},
	{"facilitator-dana/session_2.json", "What hands-on science rotation did you suggest for the spring term?", "A six-week rotation works well: volcanoes and chemical reactions, plant growth, simple machines, weather."},
	{"facilitator-dana/session_2.json", "Why does Max gues at words when he reads?", "He guesses words from the first letter."},
	{"facilitator-dana/session_3.json", "How do we test acids and bases with cabbage?", "Red cabbage indicator is perfect for pH"},
	{"facilitator-dana/session_3.json", "What kind of chapter books is Emma into?", "She's reading chapter books about horses."},
	{"student-alex/session_1.json", "When did Alex first learn what the discriminant tells you?", "It tells you how many real solutions there are before you solve anything."},
	{"student-alex/session_1.json", "What was the basketball example for parabolas?", "Think of a free throw: the ball's arc is a parabola, and the floor is the x-axis."},
	{"student-alex/session_2.json", "What grade did Alex get on his quadratics test?", "test was ok I think, got a B-."},
	{"student-alex/session_2.json", "How does Alex like explanations to be?", "can you keep it short, long explanations make me zone out"},
	{"student-alex/session_3.json", "when did we do the rocket landing problem", "a rocket's height is h = -5t^2 + 40t. When does it land?"},
}

// LoadSamples reads the sample folders under dir.
func LoadSamples(dir string) ([]SampleSet, error) {
	var sets []SampleSet
	for _, def := range sampleSets {
		set := SampleSet{Name: def.name}
		for _, file := range def.files {
			source := def.name + "/" + file
			raw, err := os.ReadFile(filepath.Join(dir, def.name, file))
			if err != nil {
				return nil, err
			}
			turns, err := parseSample(raw, def.learner)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			learner := turns[0].Learner
			for _, t := range turns {
				if t.Learner != learner {
					learner = "mixed"
				}
			}
			set.Sessions = append(set.Sessions, Session{Topic: "sample", Learner: learner, Source: source, Turns: turns})
		}
		for _, q := range sampleQuestions {
			if strings.HasPrefix(q.Source, def.name+"/") {
				set.Questions = append(set.Questions, q)
			}
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// parseSample reads either format of the README: role/content/learner
// turns, or a student's speaker/text transcript.
func parseSample(raw []byte, learner string) ([]Turn, error) {
	var rows []struct {
		Role    string  `json:"role"`
		Content string  `json:"content"`
		Learner *string `json:"learner"`
		Speaker string  `json:"speaker"`
		Text    string  `json:"text"`
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no turns")
	}
	var turns []Turn
	for _, r := range rows {
		t := Turn{Role: r.Role, Content: r.Content, Learner: learner}
		if r.Learner != nil {
			t.Learner = *r.Learner
		}
		if r.Speaker != "" {
			t.Role, t.Content = RoleAssistant, r.Text
			if r.Speaker == "Student" {
				t.Role = RoleUser
			}
		}
		if t.Role != RoleUser && t.Role != RoleAssistant || strings.TrimSpace(t.Content) == "" {
			return nil, fmt.Errorf("unreadable turn %+v", r)
		}
		turns = append(turns, t)
	}
	return turns, nil
}
