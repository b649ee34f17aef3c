package bench

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"mentormemory/mentor"
	"mentormemory/test/textgen"
)

// A learner's memories, as a year of extraction would leave them: one short
// fact per memory, most about the few skills the learner keeps working on,
// with the metadata the extractor writes (see extractor/prompt.go). Recall
// unnests every candidate's tsvector and scores the metadata, so the
// sentence lengths, the vocabulary and the share of memories with an
// emotion shape what is measured.

var academicStruggles = []string{
	"{Name} finds {skill} hard and loses track halfway through.",
	"{Name} mixes up the steps of {skill} when working quickly.",
	"{Name} struggles with {skill} when the instructions are only spoken.",
	"{Name} guesses at {skill} questions instead of working them out.",
	"{Name} avoids {skill} homework and says it takes forever.",
	"{Name} makes careless mistakes in {skill} under time pressure.",
	"{Name} needs several worked examples before trying {skill} alone.",
	"{Name} forgets the rules of {skill} from one week to the next.",
	"{Name} can do {skill} orally but not on paper.",
	"{Name} skips the hard {skill} questions and leaves them blank.",
	"{Name} reverses numbers and letters when doing {skill}.",
	"{Name} thinks {skill} is only for clever kids.",
}

var academicBreakthroughs = []string{
	"{Name} understood {skill} once it was linked to {interest}.",
	"{Name} finished a {skill} worksheet alone for the first time.",
	"{Name} got every {skill} question right on the {Weekday} quiz.",
	"Drawing a picture first helped {Name} with {skill}.",
	"{Name} explained {skill} back in their own words.",
	"{Name} improved at {skill} after we tried {strategy}.",
	"{Name} now checks their {skill} work before handing it in.",
	"{Name} enjoyed {skill} when it was turned into a game.",
	"{Name} taught a younger cousin how to do {skill}.",
	"{Name} moved up a group in {subject} thanks to {skill}.",
}

var academicNotes = []string{
	"{Name} is working on {skill} in {subject} this term.",
	"{Name}'s {subject} teacher says {skill} is the focus until the holidays.",
	"{Name} does {n} minutes of {skill} practice after dinner.",
	"{Name} uses {strategy} for {skill} at school.",
	"{Name} has an extra {subject} lesson for {skill} on {Weekday}s.",
	"{Name}'s class started a new {subject} unit on {skill}.",
}

// personalTemplates are by the topic the extractor gives them.
var personalTemplates = map[string][]string{
	"pets": {
		"{Name} has a {petKind} named {pet}.",
		"{Name} feeds {pet} every morning before school.",
		"{Name} reads aloud to {pet} when nobody is listening.",
		"{Name} wants a second {petKind} to keep {pet} company.",
	},
	"family": {
		"{Name} has a little brother called {friend}.",
		"{Name}'s grandmother lives in {town} and visits every month.",
		"{Name}'s parents both work late on {Weekday}s.",
		"{Name} shares a bedroom with an older sister.",
		"{Name}'s family is moving to {town} in the summer.",
		"{Name}'s dad does the school run on {Weekday}s.",
	},
	"schedule": {
		"{Name} has {activity} practice on {Weekday} evenings.",
		"{Name} has {activity} lessons every {Weekday} after school.",
		"{Name} spends every other weekend at their dad's house in {town}.",
		"{Name} goes to the after-school club on {Weekday}s.",
		"{Name} has a {activity} match most {Weekday}s.",
	},
	"hobbies": {
		"{Name} loves {interest} and can talk about it for hours.",
		"{Name} is saving up for a new {noun}.",
		"{Name} spends weekends on {interest} with a neighbour.",
		"{Name} builds things out of cardboard and tape.",
		"{Name} has started {activity} and loves it.",
	},
	"interests": {
		"{Name}'s favourite book is about {interest}.",
		"{Name} wants to be a {job} when they grow up.",
		"{Name} knows every fact there is about {interest}.",
		"{Name} watches videos about {interest} before bed.",
	},
	"friends": {
		"{Name}'s best friend is {friend} from school.",
		"{Name} fell out with {friend} at recess.",
		"{Name} sits next to {friend} in {subject}.",
		"{Name} made a new friend, {friend}, at {activity}.",
	},
}

var personalTopics = []string{"hobbies", "schedule", "family", "pets", "interests", "friends"}

var preferenceTemplates = map[string][]string{
	"communication_style": {
		"{Name} prefers short, step-by-step explanations.",
		"{Name} responds best to questions rather than being told answers.",
		"{Name} likes a joke before starting work.",
		"{Name} prefers written instructions to spoken ones.",
		"{Name} wants to be told plainly when an answer is wrong.",
		"{Name} opens up more when talking about {interest}.",
	},
	"pacing": {
		"{Name} needs a break every {n} minutes when working on {skill}.",
		"{Name} rushes with a timer and does better without one.",
		"{Name} likes to start with an easy question to warm up.",
		"{Name} works best in the morning, before school.",
		"{Name} needs time to think before answering in {subject}.",
	},
	"learning_style": {
		"{Name} learns {skill} best with hands-on materials.",
		"{Name} remembers things better after drawing them.",
		"{Name} likes examples about {interest} in {subject}.",
		"{Name} understands faster with a diagram.",
		"{Name} learns by explaining to someone else.",
		"{Name} follows a checklist better than a long explanation.",
	},
	"emotional_response": {
		"{Name} {response} when faced with {trigger}.",
		"When it comes to {trigger}, {Name} {response}.",
		"{Name} {response} at the first sign of {trigger}.",
	},
}

var preferenceCategories = []string{"emotional_response", "communication_style", "learning_style", "pacing"}

// What sets off an emotional response, as the extractor names it: a few
// words, lower case.
var responseTriggers = []string{
	"timed tests", "being corrected in front of others", "reading aloud", "a change of plans",
	"losing a game", "long worksheets", "a new teacher", "homework after dinner", "noisy rooms",
	"word problems", "group work", "handwriting tasks", "tests", "being rushed", "new topics",
	"spelling tests", "mental arithmetic", "presentations", "unexpected homework", "red pen marks",
}

var responses = []string{
	"freezes and stops writing", "cries and wants to stop", "gets angry and throws the pencil",
	"goes quiet and shuts down", "laughs it off but gives up", "asks to go to the toilet",
	"argues about every step", "hides their work", "says they feel sick", "rushes to get it over with",
	"starts chewing their sleeve", "asks the same question again and again",
}

var contextTemplates = []string{
	"Next session {Name} wants to continue with {skill}.",
	"{Name}'s mother asked to revisit {skill} before the {event}.",
	"{Name} stopped halfway through the {skill} practice set; finish it next time.",
	"We agreed to try {strategy} with {Name} this week and see how it goes.",
	"{Name} has a {subject} test on {Weekday}; prepare with {skill} revision.",
	"The {person} will send {skill} worksheets home for {Name}.",
	"{Name}'s father wants to start {skill} next session.",
	"Pick up the {skill} word problems {Name} did not finish.",
	"{Name} asked to look at {interest} and {skill} together next time.",
}

// Details people add to a fact; they vary the wording and the length.
var memoryDetails = []string{
	"especially at {place}", "as the {person} noticed too", "mostly on {Weekday}s",
	"since the {event}", "usually after a long day", "according to the {person}",
	"even with {strategy}", "mainly in {subject}", "at least on {Weekday}s", "ever since {activity} started",
	"more than in {subject}", "unless {pet} is in the room", "said the {person}", "before the {event}",
}

var negativeEmotions = []string{"frustrated", "confused", "anxious", "overwhelmed", "bored", "tired", "sad", "angry", "embarrassed"}

var positiveEmotions = []string{"proud", "excited", "happy", "curious", "relieved", "confident"}

var personalEmotions = []string{"excited", "happy", "frustrated", "confused", "anxious", "overwhelmed"}

var petKinds = []string{"dog", "cat", "rabbit", "hamster", "guinea pig", "tortoise", "budgie", "goldfish"}

var activities = []string{
	"swimming", "football", "piano", "gymnastics", "karate", "ballet", "chess club", "drama",
	"basketball", "violin", "scouts", "climbing", "judo", "choir", "tennis", "art club",
}

var jobs = []string{
	"vet", "astronaut", "footballer", "marine biologist", "teacher", "game designer", "chef",
	"palaeontologist", "pilot", "doctor", "architect", "YouTuber", "firefighter", "engineer",
}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// genMemory is one generated row of public.learner_memories.
type genMemory struct {
	typ                    mentor.MemoryType
	content                string
	importance, confidence float32
	metadata               mentor.Metadata
	source                 string
	mentions               int
	created, lastSeen      time.Time
}

// memoryGen writes one learner's memories from the learner's own random
// stream, so every load writes the same rows.
type memoryGen struct {
	r    *rand.Rand
	name string
	// focus holds the skills the learner keeps working on, the first (the
	// learner's topic of the moment) most of all.
	focus     []string
	subject   string
	interests []string
	pet       string
	petKind   string
	friends   []string
	town      string
	activity  string
	// seen holds the contents written so far: the app merges a repeated
	// fact into the memory it repeats, so a learner's memories differ.
	seen map[string]bool
}

func newMemoryGen(r *rand.Rand, name string) *memoryGen {
	g := &memoryGen{
		r: r, name: name,
		subject: textgen.PickSkewed(r, subjects), pet: textgen.Pick(r, pets), petKind: textgen.PickSkewed(r, petKinds),
		town: textgen.Pick(r, towns), activity: textgen.PickSkewed(r, activities), seen: map[string]bool{},
	}
	for len(g.focus) < 4 {
		if s := textgen.PickSkewed(r, skills); !slices.Contains(g.focus, s) {
			g.focus = append(g.focus, s)
		}
	}
	for range 3 {
		g.interests = append(g.interests, textgen.PickSkewed(r, interests))
		g.friends = append(g.friends, textgen.Pick(r, learnerNames))
	}
	return g
}

// topic is what the learner works on at the moment.
func (g *memoryGen) topic() string { return g.focus[0] }

// skill is a skill a memory is about: the learner's focus half of the time.
func (g *memoryGen) skill() string {
	switch p := g.r.IntN(8); {
	case p < 3:
		return g.focus[0]
	case p < 6:
		return g.focus[1+g.r.IntN(len(g.focus)-1)]
	default:
		return textgen.PickSkewed(g.r, skills)
	}
}

// between is a random value in [lo, hi).
func (g *memoryGen) between(lo, hi float64) float32 {
	return float32(lo + (hi-lo)*g.r.Float64())
}

func (g *memoryGen) chance(percent int) bool { return g.r.IntN(100) < percent }

// either returns a percent of the time, and b the rest.
func (g *memoryGen) either(percent int, a, b string) string {
	if g.chance(percent) {
		return a
	}
	return b
}

// someEmotion gives a memory one of the emotions, percent of the time.
func (g *memoryGen) someEmotion(metadata mentor.Metadata, percent int, emotions []string) {
	if g.chance(percent) {
		metadata[mentor.MetaEmotion] = textgen.PickSkewed(g.r, emotions)
	}
}

// memory writes one memory learnt at a random time of the past year, with
// a content the learner has no memory of yet (short of a few tries).
func (g *memoryGen) memory(now time.Time) genMemory {
	m := g.draw(now)
	for try := 0; g.seen[m.content] && try < 10; try++ {
		m = g.draw(now)
	}
	g.seen[m.content] = true
	return m
}

func (g *memoryGen) draw(now time.Time) genMemory {
	r := g.r
	m := genMemory{metadata: mentor.Metadata{}, source: mentor.SourceExtracted, mentions: 1,
		confidence: g.between(0.6, 1)}
	if g.chance(8) {
		m.source, m.confidence = mentor.SourceAdded, 1
	}
	slots := map[string]string{}
	switch p := r.IntN(100); {
	case p < 45:
		m.typ = mentor.Academic
		skill := g.skill()
		slots["skill"] = skill
		m.metadata[mentor.MetaTopic] = strings.ToLower(skill)
		switch k := r.IntN(10); {
		case k < 5:
			m.content, m.importance = textgen.Pick(r, academicStruggles), g.between(0.6, 0.95)
			m.metadata[mentor.MetaValence] = "negative"
			m.metadata[mentor.MetaResolution] = g.either(30, "resolved", "unresolved")
			g.someEmotion(m.metadata, 50, negativeEmotions)
		case k < 8:
			m.content, m.importance = textgen.Pick(r, academicBreakthroughs), g.between(0.5, 0.9)
			m.metadata[mentor.MetaValence] = "positive"
			g.someEmotion(m.metadata, 50, positiveEmotions)
		default:
			m.content, m.importance = textgen.Pick(r, academicNotes), g.between(0.3, 0.6)
			m.metadata[mentor.MetaValence] = "neutral"
		}
	case p < 65:
		m.typ = mentor.Personal
		topic := textgen.PickSkewed(r, personalTopics)
		m.content, m.importance = textgen.Pick(r, personalTemplates[topic]), g.between(0.2, 0.7)
		m.metadata[mentor.MetaTopic] = topic
		m.metadata[mentor.MetaValence] = g.either(35, "neutral", "positive")
		g.someEmotion(m.metadata, 12, personalEmotions)
	case p < 80:
		m.typ = mentor.Preference
		category := textgen.PickSkewed(r, preferenceCategories)
		m.content, m.importance = textgen.Pick(r, preferenceTemplates[category]), g.between(0.5, 0.9)
		m.metadata[mentor.MetaCategory] = category
		m.metadata[mentor.MetaValence] = "neutral"
		if category == "emotional_response" {
			trigger, response := textgen.PickSkewed(r, responseTriggers), textgen.PickSkewed(r, responses)
			slots["trigger"], slots["response"] = trigger, response
			m.importance = g.between(0.7, 0.95)
			m.metadata[mentor.MetaTrigger] = trigger
			m.metadata[mentor.MetaResponse] = response
			m.metadata[mentor.MetaEmotion] = textgen.PickSkewed(r, negativeEmotions)
			m.metadata[mentor.MetaValence] = "negative"
		}
	default:
		m.typ = mentor.Context
		skill := g.skill()
		slots["skill"] = skill
		m.content, m.importance = textgen.Pick(r, contextTemplates), g.between(0.3, 0.7)
		m.metadata[mentor.MetaTopic] = strings.ToLower(skill)
		if g.chance(70) {
			m.metadata[mentor.MetaNextTopic] = strings.ToLower(skill)
		}
		g.someEmotion(m.metadata, 8, negativeEmotions)
	}
	if g.chance(50) {
		m.content = strings.TrimSuffix(m.content, ".") + ", " + textgen.Pick(r, memoryDetails) + "."
	}
	m.content = g.fill(m.content, slots)

	// Learnt once in a year, most memories; some again and again, which
	// raised their confidence and kept them recent.
	m.created = now.Add(-time.Duration(r.Int64N(int64(365 * 24 * time.Hour))))
	m.lastSeen = m.created
	if g.chance(20) {
		m.mentions = 2 + r.IntN(4)
		m.confidence = min(1, m.confidence+0.1*float32(m.mentions))
		m.lastSeen = m.created.Add(time.Duration(r.Int64N(int64(now.Sub(m.created)) + 1)))
	}
	return m
}

// fill replaces each {slot} of a template: the memory's own slots first,
// then the learner's.
func (g *memoryGen) fill(tmpl string, slots map[string]string) string {
	return textgen.Capitalize(textgen.Fill(tmpl, func(name string) string {
		if v, ok := slots[name]; ok {
			return v
		}
		return g.slot(name)
	}))
}

func (g *memoryGen) slot(name string) string {
	switch name {
	case "Name":
		return g.name
	case "skill":
		return g.skill()
	case "subject":
		if g.chance(60) {
			return g.subject
		}
	case "interest":
		return textgen.Pick(g.r, g.interests)
	case "n":
		return strconv.Itoa(5 * (1 + g.r.IntN(6)))
	case "pet":
		return g.pet
	case "petKind":
		return g.petKind
	case "friend":
		return textgen.Pick(g.r, g.friends)
	case "town":
		return g.town
	case "activity":
		if g.chance(70) {
			return g.activity
		}
	}
	return drawWord(g.r, name)
}

// liveMessage is the facilitator's first message of the live session: about
// the learner's topic, so that a follow-up on the same topic keeps recall
// light.
func (g *memoryGen) liveMessage() string {
	return g.fill(textgen.Pick(g.r, liveMessages), map[string]string{"skill": g.topic()})
}

var liveMessages = []string{
	"{Name} sat down with {skill} tonight and got through about half of the set.",
	"We are doing {skill} this week, {Name} has a worksheet due on {Weekday}.",
	"Can we work on {skill} with {Name} today?",
	"{Name} has more {skill} to practise this week.",
}

// The last session, ended a few days ago: the exchanges AdvanceClosing folds
// into its closing state, from which the stored opening is built.
var (
	pastUserLines = []string{
		"{Name} is stuck on {skill} again, it makes no sense to them.",
		"{Name} got frustrated with {skill} and wanted to give up.",
		"{Name} was nervous about the {event}.",
		"Oh, I get it now! {Name} says the {skill} trick works.",
		"{Name} did it! Three {skill} questions right in a row.",
		"{Name} was tired after {activity} but still tried the {skill} practice.",
		"That helps, {Name} was a lot calmer with {strategy}.",
	}
	pastMentorLines = []string{
		"Let's break {skill} into two small steps and do one at a time.",
		"Next time we'll try {skill} word problems with {interest} in them.",
		"Try {strategy} for a week and tell me how it went.",
		"Next session we'll start with a quick {skill} warm-up.",
		"Celebrate the effort, not only the right answers.",
	}
)

// pastSession writes the exchanges of the learner's last session.
func (g *memoryGen) pastSession(start time.Time, exchanges int) []mentor.Turn {
	turns := make([]mentor.Turn, 0, 2*exchanges)
	at := start
	for range exchanges {
		for _, role := range []string{mentor.RoleUser, mentor.RoleAssistant} {
			lines := pastUserLines
			if role == mentor.RoleAssistant {
				lines = pastMentorLines
			}
			at = at.Add(time.Duration(30+g.r.IntN(180)) * time.Second)
			turns = append(turns, mentor.Turn{Role: role, Content: g.fill(textgen.Pick(g.r, lines), nil), CreatedAt: at})
		}
	}
	return turns
}

// Messages for recall. Light ones show no feeling, do not refer back and
// share the learner's topic with the live session's message, so
// mentor.PlanRetrieval keeps them light on the session's second exchange;
// deep ones show a feeling. Light ones name only the learner and the topic,
// so the run can check every one a learner may be sent against
// PlanRetrieval before measuring.
var (
	lightMessages = []string{
		"What else could {Name} practise for {skill} this week?",
		"Can you suggest a short {skill} exercise for tonight?",
		"{Name} finished the {skill} worksheet, what should come next?",
		"How long should a {skill} practice session be for {Name}?",
		"Any game ideas to practise {skill} at home?",
		"Should we keep going with {skill} or move on?",
		"Which {skill} questions should {Name} try first?",
		"Could {Name} do {skill} with a friend from class?",
	}
	deepMessages = []string{
		"{Name} is so frustrated with {skill}, it ended in tears tonight.",
		"{Name} is anxious about the {skill} test on {Weekday}.",
		"I'm worried {Name} is falling behind with {skill}.",
		"{Name} got confused by {skill} and said it makes no sense.",
		"{Name} says {skill} is boring and keeps zoning out.",
		"{Name} was exhausted after {activity} and too tired for {skill}.",
		"{Name} was so proud after finishing the {skill} worksheet!",
		"{Name} feels overwhelmed by the amount of {subject} homework.",
	}
)

// memoryStream keeps the memory generator's random streams apart from the
// conversations' (which use the facilitator's index as the stream).
const memoryStream = 1 << 40

// generate appends learner i's rows: the memories, the session that ended
// a few days ago with the opening it left, and the live session, one
// exchange old, about the learner's topic.
func (l *memoryLoader) generate(b *memoryBatch, i int, learner benchLearner) {
	r := rand.New(rand.NewPCG(l.shape.conversations.Seed, memoryStream+uint64(i)))
	g := newMemoryGen(r, learner.name)
	known := make([]mentor.LearnerMemory, 0, l.shape.PerLearner)
	for range l.shape.PerLearner {
		m := g.memory(l.now)
		id := randomUUID(r)
		b.memories = append(b.memories, memoryRow{id, learner.facilitator, learner.id, m})
		if m.typ == mentor.Personal || m.typ == mentor.Context {
			known = append(known, mentor.LearnerMemory{ID: id.String(), Type: m.typ, Content: m.content,
				Importance: float64(m.importance), Metadata: m.metadata, LastSeenAt: m.lastSeen})
		}
	}

	// The opening is built as the app builds it when a session ends (see
	// postgres.storeOpening): from the closing state, the summary and the
	// best personal and context memories.
	day := 24 * time.Hour
	pastStart := l.now.Add(-time.Duration(1+r.IntN(10))*day - time.Duration(r.IntN(12))*time.Hour)
	past := g.pastSession(pastStart, 3+r.IntN(6))
	pastID := randomUUID(r)
	closing := mentor.AdvanceClosing(mentor.ClosingState{SessionID: pastID.String()}, past, learner.name)
	ended := past[len(past)-1].CreatedAt.Add(mentor.SessionIdleLimit)
	slices.SortStableFunc(known, func(x, y mentor.LearnerMemory) int {
		if c := cmp.Compare(y.Importance, x.Importance); c != 0 {
			return c
		}
		return y.LastSeenAt.Compare(x.LastSeenAt)
	})
	opening := mentor.BuildOpening(closing, learner.summary, known[:min(len(known), openingMemories)], learner.name, ended)
	learnerText := learner.id.String()
	opening.LearnerID = &learnerText

	message := g.liveMessage()
	liveStart := l.now.Add(-time.Duration(1+r.IntN(10)) * time.Minute)
	live := []mentor.Turn{
		{Role: mentor.RoleUser, Content: message, CreatedAt: liveStart},
		{Role: mentor.RoleAssistant, Content: g.fill(textgen.Pick(r, pastMentorLines), nil), CreatedAt: liveStart.Add(time.Minute)},
	}
	liveID := randomUUID(r)
	liveClosing := mentor.AdvanceClosing(mentor.ClosingState{SessionID: liveID.String()}, live, learner.name)

	b.sessions = append(b.sessions,
		[]any{pastID, learner.facilitator, learner.id, pastStart, past[len(past)-1].CreatedAt, ended, mentor.EndedIdle,
			closing.Exchanges, past[len(past)-2].Content, mustJSON(closing)},
		[]any{liveID, learner.facilitator, learner.id, liveStart, liveStart.Add(time.Minute), nil, nil,
			liveClosing.Exchanges, message, mustJSON(liveClosing)})
	b.openings = append(b.openings, []any{learner.facilitator, learner.id, pastID, mustJSON(opening), ended})
	b.learners = append(b.learners, []any{learner.id, learner.facilitator, learner.name, g.topic(), message})
}

// openingMemories is how many memories the app builds an opening from
// (postgres.openingMemories).
const openingMemories = 30
