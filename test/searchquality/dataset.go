package searchquality

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"mentormemory/test/textgen"
)

// DefaultSeed is the seed of the labelled set the test suite measures.
// Changing it (or any template) changes every number; record the new
// baseline when you do.
const DefaultSeed = 20240611

// The speakers, as the API names them.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Question kinds: what makes a question hard, so misses can be read per
// failure mode.
const (
	KindParaphrase = "paraphrase" // reworded, shares a content word or two with the session
	KindSynonym    = "synonym"    // the key word replaced by a synonym ("music lessons" for piano)
	KindName       = "name"       // anchored on a learner's name that is in many sessions
	KindTypo       = "typo"       // one content word misspelled
	KindTemporal   = "temporal"   // "when did we talk about …", keyword present
	KindStopwords  = "stopwords"  // a reminder request padded with question words
	KindSample     = "sample"     // about the hand-written simulator/samples transcripts
)

// Kinds lists the kinds in report order.
var Kinds = []string{KindParaphrase, KindSynonym, KindName, KindTypo, KindTemporal, KindStopwords, KindSample}

// Turn is one message. Learner names the memory context it is posted to
// ("" = general); every turn of a generated session shares the session's.
type Turn struct {
	ID      string
	Role    string
	Content string
	Learner string
}

// Session is what the facilitator said between two clears of the memory.
type Session struct {
	ID      string
	Topic   string
	Learner string // "" for a general session, "mixed" for a sample that uses several contexts
	Source  string // "generated" or the sample file it came from
	Turns   []Turn
	// When it was held: at At, or, for a session of the last weeks, at the
	// time Ago names ("last week"), counted from the day the set is loaded
	// (see Start).
	At  time.Time
	Ago string
}

// Learner is a child a facilitator talks about, with the profile that
// keeps sessions about them consistent (the same instrument every time).
type Learner struct {
	Name       string
	Male       bool
	Grade      string
	Young      bool // kindergarten to 3rd grade: the tooth-fairy facts fit
	Instrument string
	Sport      string
	Teacher    string
}

// Facilitator is one account: a parent or a teacher and their learners.
type Facilitator struct {
	Key      string
	Name     string
	Teacher  bool
	Pet      string // the family pet, which chores and allowance talk names
	PetName  string
	Learners []Learner
	Sessions []Session
}

// Question is searched verbatim; SessionID holds the answer.
type Question struct {
	ID          string
	Facilitator string // Facilitator.Key
	Text        string
	Kind        string
	SessionID   string
	Evidence    string // the sentence that answers it, for reports
}

// Dataset is a whole labelled set.
type Dataset struct {
	Seed         uint64
	Facilitators []Facilitator
	Questions    []Question
}

// Session returns the session with the given id.
func (d *Dataset) Session(id string) (*Facilitator, *Session) {
	for i := range d.Facilitators {
		f := &d.Facilitators[i]
		for j := range f.Sessions {
			if f.Sessions[j].ID == id {
				return f, &f.Sessions[j]
			}
		}
	}
	return nil, nil
}

type persona struct {
	key, name string
	teacher   bool
	facts     int    // how many facts to plant
	samples   string // sample set folded into this account
	learners  []Learner
}

// The accounts. Sizes differ on purpose: a small history is easier than a
// large one, and the benchmark has both.
var personas = []persona{
	{key: "dana", name: "Dana", facts: 34, samples: "facilitator-dana", learners: []Learner{
		{Name: "Emma", Grade: "4th grade"},
		{Name: "Max", Male: true, Grade: "2nd grade", Young: true},
	}},
	{key: "priya", name: "Priya", facts: 44, learners: []Learner{
		{Name: "Noah", Male: true, Grade: "6th grade"},
		{Name: "Lily", Grade: "3rd grade", Young: true},
		{Name: "Sam", Male: true, Grade: "kindergarten", Young: true},
	}},
	{key: "okafor", name: "Ms. Okafor", teacher: true, facts: 28, learners: []Learner{
		{Name: "Ava", Grade: "3rd grade", Young: true},
		{Name: "Ethan", Male: true, Grade: "3rd grade", Young: true},
		{Name: "Mia", Grade: "3rd grade", Young: true},
		{Name: "Jayden", Male: true, Grade: "3rd grade", Young: true},
	}},
	{key: "jordan", name: "Jordan", facts: 40, samples: "student-alex", learners: []Learner{
		{Name: "Zoe", Grade: "5th grade"},
		{Name: "Leo", Male: true, Grade: "1st grade", Young: true},
		{Name: "Alex", Male: true, Grade: "10th grade"},
	}},
}

// Generate builds the labelled set. samples may be nil; sessions and
// questions from it are then left out. The dated questions come after
// the others, and the when questions, with the copies of the accounts
// they are asked of, last.
func Generate(seed uint64, samples []SampleSet) Dataset {
	d := Dataset{Seed: seed}
	var dated []Question
	for i, p := range personas {
		// One stream per account, so a template added for one account does
		// not reshuffle the others, and one for its times (dates.go).
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1))
		times := rand.New(rand.NewPCG(seed, uint64(i)+101))
		var set *SampleSet
		for j := range samples {
			if samples[j].Name == p.samples {
				set = &samples[j]
			}
		}
		f, qs, dq := generateFacilitator(rng, times, p, set)
		d.Facilitators = append(d.Facilitators, f)
		d.Questions = append(d.Questions, qs...)
		dated = append(dated, dq...)
	}
	d.Questions = append(d.Questions, dated...)
	// The copies of the accounts that the when questions are asked of
	// (when.go) come last, and so do their questions.
	copies, when := whenAccounts(seed, d.Facilitators)
	d.Facilitators = append(d.Facilitators, copies...)
	d.Questions = append(d.Questions, when...)
	for i := range d.Questions {
		d.Questions[i].ID = fmt.Sprintf("q%03d", i+1)
	}
	return d
}

// fact is a fact template made concrete for one account.
type fact struct {
	tmpl      *factTemplate
	learner   *Learner // nil for a general fact
	filler    *filler
	statement string
	reply     string
	about     string
}

type sessionPlan struct {
	learner *Learner
	topic   string
	facts   []*fact
	long    bool
	sample  *Session
}

// generateFacilitator writes an account's sessions and questions with rng,
// and with times when the sessions were held and the dated questions.
func generateFacilitator(rng, times *rand.Rand, p persona, samples *SampleSet) (Facilitator, []Question, []Question) {
	f := Facilitator{Key: p.key, Name: p.name, Teacher: p.teacher, Learners: slices.Clone(p.learners)}
	profile(rng, f.Learners)
	f.Pet, f.PetName = textgen.Pick(rng, familyPets), textgen.Pick(rng, petNames)
	used := map[string]bool{}

	// Plant the facts, one session each.
	var facts []*fact
	for _, ti := range rng.Perm(len(factTemplates)) {
		if len(facts) == p.facts {
			break
		}
		t := &factTemplates[ti]
		if !t.fits(p.teacher) {
			continue
		}
		var learner *Learner
		if !t.general {
			var ok []*Learner
			for i := range f.Learners {
				if t.age == "" || (t.age == "young") == f.Learners[i].Young {
					ok = append(ok, &f.Learners[i])
				}
			}
			if len(ok) == 0 {
				continue
			}
			learner = textgen.Pick(rng, ok)
		}
		vars := contextVars(&f, learner)
		for _, s := range t.slots {
			var v string
			if s.free {
				v = textgen.Pick(rng, s.pool)
			} else {
				v = drawUnused(rng, s.pool, used)
			}
			// A value may name the learner ("{pos} own").
			vars[s.name] = newFiller(rng, vars).fill(v)
		}
		fl := newFiller(rng, vars)
		facts = append(facts, &fact{
			tmpl: t, learner: learner, filler: fl,
			statement: sentence(fl.fill(textgen.Pick(rng, t.say))),
			reply:     sentence(fl.fill(textgen.Pick(rng, t.reply))),
			about:     fl.fill(t.about),
		})
	}

	// Sessions: one per fact plus distractors that share the topics and
	// the vocabulary but hold no planted fact.
	n := max(30+rng.IntN(31), len(facts)+6)
	if samples != nil {
		n = max(n-len(samples.Sessions), len(facts)+6)
	}
	var plans []*sessionPlan
	for _, ft := range facts {
		topic := ft.tmpl.topic
		if p.teacher && topics[topic].parentOnly {
			topic = "school" // a teacher hears about a child's health at school
		}
		plans = append(plans, &sessionPlan{learner: ft.learner, topic: topic, facts: []*fact{ft}})
	}
	for len(plans) < n {
		sp := &sessionPlan{}
		if rng.IntN(5) > 0 {
			sp.learner = &f.Learners[rng.IntN(len(f.Learners))]
		}
		sp.topic = textgen.Pick(rng, topicsFor(p.teacher, sp.learner == nil))
		plans = append(plans, sp)
	}
	rng.Shuffle(len(plans), func(i, j int) { plans[i], plans[j] = plans[j], plans[i] })
	// A few sessions run past the 50-turn archive segment, so one session
	// becomes two archive rows.
	for _, i := range rng.Perm(len(plans))[:3] {
		plans[i].long = true
	}
	if samples != nil {
		// Spread the samples through the history, in their own order.
		for k := range samples.Sessions {
			at := (k + 1) * len(plans) / (len(samples.Sessions) + 1)
			plans = slices.Insert(plans, at, &sessionPlan{sample: &samples.Sessions[k]})
		}
	}

	sessionOf := map[*fact]string{}
	for i, sp := range plans {
		id := fmt.Sprintf("%s-s%02d", p.key, i+1)
		var s Session
		if sp.sample != nil {
			s = *sp.sample
			s.Turns = slices.Clone(s.Turns)
		} else {
			s = buildSession(rng, &f, sp)
			for _, ft := range sp.facts {
				sessionOf[ft] = id
			}
		}
		s.ID = id
		for j := range s.Turns {
			s.Turns[j].ID = fmt.Sprintf("%s-t%03d", id, j+1)
		}
		f.Sessions = append(f.Sessions, s)
	}

	vocab := map[string]bool{}
	for _, s := range f.Sessions {
		for _, t := range s.Turns {
			for _, w := range Words(t.Content) {
				vocab[w] = true
			}
		}
	}
	var qs []Question
	for _, ft := range facts {
		for _, q := range askFact(rng, &f, ft, vocab) {
			q.Facilitator, q.SessionID, q.Evidence = f.Key, sessionOf[ft], ft.statement
			qs = append(qs, q)
		}
	}
	if samples != nil {
		for _, sq := range samples.Questions {
			for i, s := range f.Sessions {
				if s.Source == sq.Source {
					qs = append(qs, Question{Facilitator: f.Key, Text: sq.Text, Kind: KindSample,
						SessionID: f.Sessions[i].ID, Evidence: sq.Evidence})
				}
			}
		}
	}

	var factSessions []string
	for _, ft := range facts {
		factSessions = append(factSessions, sessionOf[ft])
	}
	dateSessions(times, &f, factSessions)
	seen := map[string]bool{}
	for _, q := range qs {
		seen[strings.ToLower(q.Text)] = true
	}
	return f, qs, datedQuestions(times, &f, facts, sessionOf, seen)
}

// profile gives each learner of a family a distinct instrument, sport and
// school teacher, which the distractor sessions keep mentioning.
func profile(rng *rand.Rand, learners []Learner) {
	used := map[string]bool{}
	for i := range learners {
		learners[i].Instrument = drawUnused(rng, instruments, used)
		learners[i].Sport = drawUnused(rng, sports, used)
		learners[i].Teacher = drawUnused(rng, schoolTeachers, used)
	}
}

func drawUnused(rng *rand.Rand, pool []string, used map[string]bool) string {
	for _, i := range rng.Perm(len(pool)) {
		if !used[pool[i]] {
			used[pool[i]] = true
			return pool[i]
		}
	}
	panic(fmt.Sprintf("searchquality: pool exhausted: %q", pool))
}

// contextVars are the placeholders of one memory context: the learner's
// name, pronouns and profile, and the family or class around them.
func contextVars(f *Facilitator, l *Learner) map[string]string {
	v := map[string]string{}
	names := make([]string, len(f.Learners))
	for i, x := range f.Learners {
		names[i] = x.Name
	}
	v["L1"], v["L2"] = names[0], names[1]
	v["pet"], v["petname"] = f.Pet, f.PetName
	switch {
	case f.Teacher:
		v["kids"], v["home"] = "my class", "in class"
	case len(names) == 2:
		v["kids"], v["home"] = names[0]+" and "+names[1], "at home"
	default:
		v["kids"], v["home"] = "the kids", "at home"
	}
	if l == nil {
		return v
	}
	v["L"], v["grade"] = l.Name, l.Grade
	v["instrument"], v["sport"], v["teacher"] = l.Instrument, l.Sport, l.Teacher
	v["sub"], v["obj"], v["pos"], v["Sub"], v["Pos"] = "she", "her", "her", "She", "Her"
	if l.Male {
		v["sub"], v["obj"], v["pos"], v["Sub"], v["Pos"] = "he", "him", "his", "He", "His"
	}
	for _, x := range f.Learners {
		if x.Name != l.Name {
			v["sib"] = x.Name
			break
		}
	}
	return v
}

// sentence capitalizes a filled template, whose first word may have been a
// placeholder.
func sentence(s string) string { return textgen.Capitalize(strings.TrimSpace(s)) }

// buildSession writes the turns of one planned session: exchanges on its
// topic, small talk full of the words every session shares, the planted
// facts at random places, and a second topic for some of the exchanges.
func buildSession(rng *rand.Rand, f *Facilitator, sp *sessionPlan) Session {
	pairs := 3 + rng.IntN(18) // 6–40 turns
	if sp.long {
		pairs = 26 + rng.IntN(9) // 52–68 turns: two archive rows
	}
	general := sp.learner == nil
	second := textgen.Pick(rng, topicsFor(f.Teacher, general))
	factAt := map[int]*fact{}
	for _, ft := range sp.facts {
		for {
			at := rng.IntN(pairs)
			if factAt[at] == nil {
				factAt[at] = ft
				break
			}
		}
	}
	name := ""
	if sp.learner != nil {
		name = sp.learner.Name
	}
	var turns []Turn
	add := func(user, assistant string) {
		turns = append(turns,
			Turn{Role: RoleUser, Content: user, Learner: name},
			Turn{Role: RoleAssistant, Content: assistant, Learner: name})
	}
	// Exchanges that go on about a fact come soon after it, unless the
	// session ends first.
	var pending [][2]string
	var pendingFact *fact
	for i := range pairs {
		fl := newFiller(rng, contextVars(f, sp.learner))
		if len(pending) > 0 && factAt[i] == nil && rng.IntN(10) < 7 {
			add(sentence(pendingFact.filler.fill(pending[0][0])), sentence(pendingFact.filler.fill(pending[0][1])))
			pending = pending[1:]
			continue
		}
		if ft := factAt[i]; ft != nil {
			pending, pendingFact = nil, ft
			for _, fu := range ft.tmpl.follow {
				if rng.IntN(10) < 7 {
					pending = append(pending, fu)
				}
			}
			user := ft.statement
			if rng.IntN(3) == 0 {
				user = sentence(fl.fill(textgen.Pick(rng, openersFor(general)))) + " " + user
			}
			reply := ft.reply
			if rng.IntN(2) == 0 {
				reply = sentence(fl.fill(textgen.Pick(rng, acks))) + " " + reply
			}
			if rng.IntN(10) < 6 {
				reply += " " + joinSentences(advice(rng, fl, topics[sp.topic].assistant, general)[1:])
				reply = strings.TrimSpace(reply)
			}
			add(user, reply)
			continue
		}
		topic := sp.topic
		switch r := rng.IntN(10); {
		case i == 0 && rng.IntN(2) == 0, r < 2:
			topic = "smalltalk"
		case r < 4:
			topic = second
		}
		t := topics[topic]
		if general && topic == "smalltalk" {
			t = topics["smalltalk-general"]
		}
		var u, a []string
		if rng.IntN(4) == 0 {
			u = append(u, fl.fill(textgen.Pick(rng, openersFor(general))))
		}
		u = append(u, fl.fill(textgen.Pick(rng, t.user)))
		if rng.IntN(3) == 0 {
			u = append(u, fl.fill(textgen.Pick(rng, tailsFor(general))))
		}
		if rng.IntN(5) < 2 {
			a = append(a, fl.fill(textgen.Pick(rng, acks)))
		}
		a = append(a, advice(rng, fl, t.assistant, general)...)
		if rng.IntN(10) < 3 {
			a = append(a, fl.fill(textgen.Pick(rng, followUpsFor(general))))
		}
		add(joinSentences(u), joinSentences(a))
	}
	return Session{Topic: sp.topic, Learner: name, Source: "generated", Turns: turns}
}

// advice writes the body of a mentor reply. The mentor is a language
// model and answers at length, so a reply is one to three points on the
// topic and often a general remark full of the words every session shares;
// short replies would make whole-session scoring look better than it is.
func advice(rng *rand.Rand, fl *filler, pool []string, general bool) []string {
	n := 1 + rng.IntN(3)
	var out []string
	for _, i := range rng.Perm(len(pool))[:min(n, len(pool))] {
		out = append(out, fl.fill(pool[i]))
	}
	if rng.IntN(2) == 0 {
		out = append(out, fl.fill(textgen.Pick(rng, choose(general, generalRemarks, remarks))))
	}
	return out
}

func joinSentences(parts []string) string {
	for i := range parts {
		parts[i] = sentence(parts[i])
	}
	return strings.Join(parts, " ")
}

// Weights of the question kinds for planted facts, in Kinds order (the
// samples bring their own questions).
var kindWeights = []struct {
	kind   string
	weight int
}{
	{KindParaphrase, 28}, {KindSynonym, 22}, {KindName, 12}, {KindTypo, 16},
	{KindTemporal, 13}, {KindStopwords, 9},
}

func drawKind(rng *rand.Rand, not map[string]bool) string {
	total := 0
	for _, k := range kindWeights {
		if !not[k.kind] {
			total += k.weight
		}
	}
	r := rng.IntN(total)
	for _, k := range kindWeights {
		if not[k.kind] {
			continue
		}
		if r < k.weight {
			return k.kind
		}
		r -= k.weight
	}
	panic("unreachable")
}

// Frames for the questions built from a fact's "about" phrase.
var (
	temporalFrames = []string{
		"When did we talk about {about}?",
		"When was it that I mentioned {about}?",
		"What day did we discuss {about}?",
		"Around when did I bring up {about}?",
		"When did I tell you about {about}?",
		"how long ago did we go over {about}",
	}
	stopwordFrames = []string{
		"What was it that I said about {about}?",
		"Can you remind me what we said about {about}?",
		"What did I tell you about {about} again?",
		"Did we ever talk about {about}?",
		"What were the things we said about {about} back then?",
		"do you remember what it was with {about}",
	}
)

// askFact writes one or two questions about a fact, of different kinds.
func askFact(rng *rand.Rand, f *Facilitator, ft *fact, vocab map[string]bool) []Question {
	n := 1
	if rng.IntN(100) < 30 {
		n = 2
	}
	var out []Question
	usedKinds := map[string]bool{}
	usedAsks := map[int]bool{}
	for len(out) < n {
		kind := drawKind(rng, usedKinds)
		usedKinds[kind] = true
		var text string
		switch kind {
		case KindTemporal, KindStopwords:
			frames := temporalFrames
			if kind == KindStopwords {
				frames = stopwordFrames
			}
			text = strings.ReplaceAll(textgen.Pick(rng, frames), "{about}", ft.about)
		case KindTypo:
			text = typoQuestion(rng, f, ft, usedAsks, vocab)
		default:
			i := chooseAsk(rng, ft.tmpl.asks, kind, usedAsks)
			if i < 0 {
				continue
			}
			text = ft.filler.fill(ft.tmpl.asks[i].text)
		}
		if text == "" {
			continue
		}
		out = append(out, Question{Text: casual(rng, sentence(text)), Kind: kind})
	}
	return out
}

// chooseAsk picks an unused question of the kind, or -1.
func chooseAsk(rng *rand.Rand, asks []ask, kind string, used map[int]bool) int {
	var ok []int
	for i, a := range asks {
		if a.kind == kind && !used[i] {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return -1
	}
	i := textgen.Pick(rng, ok)
	used[i] = true
	return i
}

// typoQuestion misspells one content word of a question that the session
// actually contains, so a typo-tolerant search can still find it; the slip
// must not itself be a word of the account, or it would be no typo.
func typoQuestion(rng *rand.Rand, f *Facilitator, ft *fact, usedAsks map[int]bool, vocab map[string]bool) string {
	names := map[string]bool{}
	for _, l := range f.Learners {
		names[strings.ToLower(l.Name)] = true
	}
	inFact := map[string]bool{}
	for _, w := range Words(ft.statement + " " + ft.reply) {
		inFact[w] = true
	}
	var bases []string
	for _, i := range rng.Perm(len(ft.tmpl.asks)) {
		if !usedAsks[i] && ft.tmpl.asks[i].kind != KindSynonym {
			bases = append(bases, ft.filler.fill(ft.tmpl.asks[i].text))
		}
	}
	bases = append(bases, strings.ReplaceAll(textgen.Pick(rng, stopwordFrames), "{about}", ft.about))
	for _, base := range bases {
		var cands []string
		for _, w := range Words(base) {
			if len(w) >= 5 && inFact[w] && !names[w] && !questionStopwords[w] && !slices.Contains(cands, w) {
				cands = append(cands, w)
			}
		}
		if len(cands) == 0 {
			continue
		}
		w := textgen.Pick(rng, cands)
		for range 10 {
			bad := misspell(rng, w)
			if bad != w && !vocab[bad] {
				return replaceWord(base, w, bad)
			}
		}
	}
	return ""
}

// replaceWord replaces the first whole-word, case-insensitive occurrence.
func replaceWord(text, word, with string) string {
	lower := strings.ToLower(text)
	for from := 0; ; {
		i := strings.Index(lower[from:], word)
		if i < 0 {
			return text
		}
		i += from
		j := i + len(word)
		before := i == 0 || !isWordByte(lower[i-1])
		after := j == len(lower) || !isWordByte(lower[j])
		if before && after {
			return text[:i] + with + text[j:]
		}
		from = j
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

// casual types some questions the way people do in a search box: all
// lower case, or without the question mark.
func casual(rng *rand.Rand, q string) string {
	switch rng.IntN(10) {
	case 0, 1:
		return strings.TrimSuffix(strings.ToLower(q), "?")
	case 2:
		return strings.TrimSuffix(q, "?")
	}
	return q
}
