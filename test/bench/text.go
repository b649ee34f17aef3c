package bench

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"mentormemory/test/textgen"
)

// The generated conversations must look like real ones to Postgres: full
// sentences of mixed length, a vocabulary in the low thousands with a long
// tail, a few words (homework, bedtime, teacher) used everywhere and many used
// rarely. That is what sizes the GIN posting lists, the tsvectors BM25
// unnests, the ts_headline work and each facilitator's search_vocabulary, so
// a benchmark on repeated lorem ipsum would measure the wrong thing.
//
// Slots are filled from pools with a Zipf-like skew (textgen.PickSkewed), so
// early entries are common and late ones rare, as words are in real speech.

var learnerNames = []string{
	"Emma", "Max", "Olivia", "Noah", "Ava", "Liam", "Mia", "Lucas", "Sophia", "Ethan",
	"Isabella", "Mateo", "Amelia", "Leo", "Harper", "Elijah", "Aria", "Oliver", "Chloe", "Jack",
	"Zoe", "Henry", "Nora", "Samuel", "Lily", "Julian", "Hannah", "Theo", "Layla", "Owen",
	"Maya", "Aiden", "Priya", "Arjun", "Fatima", "Omar", "Yuki", "Kenji", "Ingrid", "Lars",
	"Chiara", "Luca", "Amara", "Kofi", "Sofia", "Diego", "Camila", "Santiago", "Aisha", "Yusuf",
	"Freya", "Finn", "Elodie", "Hugo", "Anya", "Mikhail", "Mei", "Wei", "Nadia", "Tariq",
	"Rosa", "Pablo", "Ines", "Tomas", "Greta", "Felix", "Clara", "Jonah", "Ruby", "Declan",
	"Imogen", "Rory", "Niamh", "Callum", "Saoirse", "Malik", "Zara", "Idris", "Leila", "Ravi",
	"Ananya", "Rohan", "Esme", "Jasper", "Matilda", "Otto", "Beatrix", "Arlo", "Hazel", "Silas",
	"Willow", "Ezra", "Iris", "Milo", "Penelope", "Rafael", "Valentina", "Gabriel", "Lucia", "Adrian",
	"Naomi", "Caleb", "Eliza", "Dmitri", "Katya", "Bodhi", "Kiara", "Tane", "Aroha", "Sione",
	"Keanu", "Leilani", "Ayla", "Emre", "Selin", "Björn", "Astrid", "Nils", "Maja", "Oskar",
}

// How a facilitator refers to a child in the general conversation, where no
// learner is chosen.
var childRefs = []string{
	"my son", "my daughter", "my oldest", "my youngest", "one of my students", "my middle child",
	"a girl in my class", "a boy in my reading group", "my stepson", "my stepdaughter", "the twins",
	"my nephew", "my niece", "a new student", "my kid", "our foster son",
}

var subjects = []string{
	"math", "reading", "writing", "spelling", "science", "history", "geography", "French",
	"Spanish", "music", "art", "coding", "algebra", "biology", "chemistry", "physics",
	"geometry", "English literature", "social studies", "German", "statistics", "economics",
}

var skills = []string{
	"homework", "fractions", "times tables", "long division", "reading comprehension", "reading aloud",
	"spelling tests", "handwriting", "phonics", "word problems", "essay structure", "sight words",
	"mental arithmetic", "decimals", "percentages", "paragraph writing", "punctuation", "grammar",
	"vocabulary lists", "telling the time", "counting money", "book reports", "lab reports",
	"memorising dates", "map reading", "note taking", "studying for quizzes", "equations",
	"graphs and charts", "cursive", "poetry analysis", "creative writing", "verb conjugations",
	"presentations", "group projects", "research skills", "typing", "piano scales", "sheet music",
	"geometry proofs", "negative numbers", "place value", "rounding", "narrative writing",
	"persuasive essays", "citations", "periodic table", "photosynthesis", "multiplication",
}

var interests = []string{
	"dinosaurs", "Minecraft", "football", "drawing comics", "basketball", "piano", "Lego robotics",
	"horses", "baking", "gymnastics", "swimming", "chess", "skateboarding", "anime", "astronomy",
	"insects", "bird watching", "origami", "magic tricks", "Pokémon cards", "YouTube videos",
	"video games", "dancing", "theatre", "cooking", "gardening", "fishing", "camping", "climbing",
	"karate", "ballet", "fantasy novels", "graphic novels", "volcanoes", "trains", "space rockets",
	"ocean animals", "building forts", "coding games", "guitar", "violin", "photography",
	"knitting", "skiing", "cycling", "birdsong", "sharks", "mythology", "geology", "poetry slams",
}

var behaviors = []string{
	"refuses to start homework", "melts down over small mistakes", "cries before school",
	"interrupts constantly", "won't go to bed", "argues about every rule", "gives up after one try",
	"daydreams in class", "forgets assignments at school", "rushes through tests",
	"gets into fights at recess", "clings to me at drop-off", "lies about finished homework",
	"slams doors when upset", "won't eat breakfast", "stays up late on the tablet",
	"copies answers from friends", "says they are stupid", "won't talk about their day",
	"hits their little brother", "bites their nails", "freezes during tests",
	"avoids reading out loud", "throws things when frustrated", "talks back to teachers",
	"won't share with classmates", "wanders around the classroom", "hums loudly during lessons",
	"gets distracted by every noise", "procrastinates until the last minute",
	"apologises for everything", "refuses to practise piano", "complains of stomach aches on Mondays",
	"compares themselves to their sister", "plays alone at recess", "follows the louder kids",
	"loses track of time", "says nobody likes them", "hides in the bathroom during lunch",
	"erases their work until the paper tears", "needs constant reassurance", "shuts down when corrected",
}

var triggers = []string{
	"homework time starts", "we turn off the screens", "plans change suddenly", "a friend cancels",
	"they lose a game", "they get a question wrong", "the classroom gets noisy", "we mention bedtime",
	"their sister gets attention", "a substitute teacher comes in", "there is a test coming",
	"we visit the grandparents", "they have to write by hand", "the week is busy",
	"they feel left out", "someone corrects them", "we rush in the morning", "they are hungry",
	"they are tired after practice", "lunch is loud", "the bus is late", "a new unit starts in math",
	"they have to read in front of the class", "I say no to a snack", "the weekend ends",
	"the teacher raises her voice", "their brother teases them", "the wifi goes down",
}

var strategies = []string{
	"a visual schedule", "a timer for homework blocks", "a sticker chart", "a calm-down corner",
	"breathing exercises", "first-then language", "offering two choices", "a reward jar",
	"reading together before bed", "a checklist by the door", "short movement breaks",
	"a weekly family meeting", "a feelings journal", "special one-on-one time",
	"natural consequences", "a homework contract", "the Pomodoro technique",
	"flashcards turned into a game", "audiobooks alongside the text", "a quiet study spot",
	"screen limits agreed together", "specific praise for effort", "a worry box",
	"role-playing tricky situations", "a wind-down routine", "pre-teaching new material",
	"chunking assignments", "a buddy system", "a daily check-in with the teacher",
	"graphic organisers", "counting blocks and manipulatives", "math games with dice",
	"a reading log", "paired reading", "a morning routine chart", "countdown warnings before transitions",
	"a token economy", "a mindfulness app", "a growth mindset poster", "letting them teach me",
	"a weighted blanket", "noise-cancelling headphones", "a fidget toy", "a traffic light feelings chart",
}

var routines = []string{
	"bedtime", "morning", "homework", "dinner", "screen time", "bath", "weekend", "after-school",
	"reading", "practice", "chores", "school drop-off",
}

var events = []string{
	"parent-teacher conference", "school trip", "math test", "spelling bee", "piano recital",
	"swimming gala", "new school year", "move to a new house", "new baby sibling", "birthday party",
	"sleepover", "end-of-year exams", "school play", "summer holiday", "science fair",
	"dentist appointment", "family wedding", "move up to middle school", "class presentation",
	"football tournament", "standardised test", "field day", "chess tournament", "school camp",
}

var worries = []string{
	"falling behind", "being bullied", "not making friends", "test anxiety", "too much screen time",
	"low self-esteem", "sleep problems", "picky eating", "sibling rivalry", "separation anxiety",
	"perfectionism", "attention problems", "low motivation", "reading below grade level",
	"friendship drama", "social media", "lying", "anger outbursts", "shyness", "homework battles",
	"school refusal", "nightmares", "tics", "bedwetting", "dyslexia", "ADHD", "speech delays",
}

var feelings = []string{
	"frustrated", "anxious", "overwhelmed", "bored", "discouraged", "embarrassed", "angry",
	"restless", "withdrawn", "clingy", "defiant", "exhausted", "nervous", "jealous", "sad",
	"confused", "irritable", "stubborn", "proud", "excited", "curious", "hopeful", "calmer",
	"motivated", "confident", "lonely", "resentful", "sensitive",
}

var parentFeelings = []string{
	"exhausted", "guilty", "frustrated", "worried", "stuck", "overwhelmed", "hopeful",
	"encouraged", "unsure", "impatient", "relieved", "drained", "lost", "proud", "conflicted",
}

var persons = []string{
	"teacher", "school counsellor", "principal", "grandmother", "grandfather", "babysitter",
	"coach", "tutor", "paediatrician", "speech therapist", "occupational therapist", "librarian",
	"music teacher", "classroom assistant", "special needs coordinator", "school nurse", "psychologist",
}

var places = []string{
	"school", "the playground", "the library", "grandma's house", "the supermarket", "the car",
	"the dinner table", "swimming lessons", "the classroom", "the bus", "football practice",
	"the park", "the dentist", "the cafeteria", "the after-school club", "the museum", "the kitchen",
	"their bedroom", "the living room", "church", "the pool", "the cinema", "a restaurant",
}

var times = []string{
	"morning", "evening", "weekday", "weekend", "Monday", "Sunday night", "school night",
	"afternoon", "lunchtime", "bedtime", "Friday",
}

// Ordinary words for the details people add; they widen the vocabulary the
// way real conversations do.
var adjectives = []string{
	"messy", "quiet", "loud", "tiny", "enormous", "sticky", "broken", "favourite", "new", "old",
	"colourful", "boring", "difficult", "easy", "confusing", "exciting", "gentle", "crowded",
	"empty", "noisy", "chaotic", "peaceful", "rainy", "freezing", "sunny", "late", "early",
	"strict", "patient", "funny", "serious", "shiny", "scratched", "borrowed", "forgotten",
	"handwritten", "printed", "laminated", "overdue", "crumpled", "soggy", "glittery", "wobbly",
	"squeaky", "tangled", "muddy", "lopsided", "mysterious", "ridiculous", "spotless",
}

var nouns = []string{
	"backpack", "lunchbox", "notebook", "worksheet", "pencil case", "calendar", "fridge", "couch",
	"tablet", "phone", "laptop", "homework folder", "uniform", "shoes", "jacket", "breakfast",
	"snack", "sandwich", "cereal", "pizza", "bike", "scooter", "trampoline", "puppy", "kitten",
	"hamster", "goldfish", "cousin", "neighbour", "bus driver", "report card", "permission slip",
	"library book", "water bottle", "raincoat", "piano book", "football boots", "paint set",
	"science kit", "birthday invitation", "group chat", "whiteboard", "timetable", "reading glasses",
	"hearing aids", "violin case", "chess board", "sketchbook", "aquarium", "telescope", "harmonica",
	"kaleidoscope", "xylophone", "jigsaw puzzle", "skipping rope", "sleeping bag", "costume",
}

// Words mentors use that parents rarely do.
var concepts = []string{
	"consistency", "predictability", "executive function", "working memory", "self-regulation",
	"co-regulation", "positive reinforcement", "transitions", "autonomy", "competence", "connection",
	"modelling", "scaffolding", "boundaries", "validation", "resilience", "sensory overload",
	"emotional vocabulary", "intrinsic motivation", "a growth mindset", "attachment", "routine",
	"problem solving", "frustration tolerance", "impulse control", "self-talk", "metacognition",
}

var professionals = []string{
	"the paediatrician", "a child psychologist", "the school counsellor", "an educational psychologist",
	"an occupational therapist", "a speech and language therapist", "the special needs coordinator",
	"a family therapist", "the GP",
}

// Places and pets people name in passing: proper nouns a facilitator uses
// and few others do.
var towns = []string{
	"Brighton", "Leeds", "Portland", "Austin", "Lyon", "Utrecht", "Galway", "Aarhus", "Bologna",
	"Dunedin", "Halifax", "Tucson", "Bergen", "Porto", "Graz", "Kyoto", "Oaxaca", "Mombasa", "Perth",
	"Cork", "Boulder", "Ghent", "Tampere", "Valencia", "Asheville", "Hobart", "Nantes", "Salzburg",
}

var pets = []string{
	"Biscuit", "Pepper", "Mochi", "Luna", "Ziggy", "Nugget", "Waffles", "Pickles", "Shadow", "Clover",
	"Noodle", "Pretzel", "Tofu", "Rocket", "Bramble", "Sprout", "Juniper", "Marbles",
}

var userTemplates = []string{
	"{Name}'s friend {friend} came over and it went surprisingly well.",
	"We spent the weekend in {town} and {name} was a different child.",
	"Our dog {pet} is the only one {name} talks to when upset.",
	"{Name} has been struggling with {skill} lately.",
	"Every {time} we end up arguing about {skill}.",
	"{Name} gets really {feeling} when {trigger}.",
	"I tried {strategy} but it only worked for a few days.",
	"The {person} told me that {name} {behavior}.",
	"How can I help {name} with {skill} without it turning into a fight?",
	"We have a {event} coming up and I'm worried about {worry}.",
	"Lately {name} {behavior}, and I honestly don't know how to react.",
	"Is it normal for a {age}-year-old to be this {feeling}?",
	"Our {routine} routine falls apart whenever {trigger}.",
	"{Name} loves {interest} but hates anything to do with {subject}.",
	"My partner and I disagree about how strict to be with {routine}.",
	"Screen time is a real issue, {name} wants the {noun} all the time.",
	"I teach a class of {count} and several of them {behavior}.",
	"What do you think about {strategy} for a {age}-year-old?",
	"The {person} suggested {strategy}, does that make sense?",
	"I feel {parentFeeling} because nothing seems to stick.",
	"{Name} finished {skill} on their own this week and was so proud.",
	"It happened again at {place} with the {adj} {noun}.",
	"We used {strategy} yesterday and {name} was much calmer.",
	"I think the real problem is {worry}, not {skill}.",
	"Since the {event} {name} has been more {feeling} than usual.",
	"Their {subject} grades dropped and I'm worried about {worry}.",
	"{Name} only wants to talk about {interest}, could we use that somehow?",
	"Mornings are chaos, {name} {behavior} and we are always late.",
	"By {time} I'm too {parentFeeling} to stay patient.",
	"Should I mention {worry} to the {person}?",
	"Thanks, that helped a lot with {routine} last week.",
	"Honestly I feel {parentFeeling}, {name} {behavior} again today.",
	"Another thing: the {adj} {noun} keeps getting lost between school and home.",
}

var assistantTemplates = []string{
	"It sounds like {name} is {feeling}, which is very common at {age}.",
	"One approach that often helps is {strategy}.",
	"Try breaking {skill} into {count} short steps and celebrate each one.",
	"Before {time}, agree together on what {routine} will look like.",
	"Notice what happens right before {name} {behavior}; that pattern usually points to the trigger.",
	"You could ask the {person} whether {name} {behavior} in other settings too.",
	"Keep the {routine} routine predictable: same order, same cues, fewer choices.",
	"Praise the effort rather than the result, especially around {skill}.",
	"It is okay to feel {parentFeeling}; consistency matters more than perfection.",
	"For {subject}, connecting it to {interest} can turn resistance into curiosity.",
	"If {worry} continues for more than a few weeks, it may be worth talking to {professional}.",
	"A visual plan can make {skill} feel less overwhelming.",
	"Let's plan one small change for this week: {strategy} during {routine}.",
	"How did {name} respond when you tried {strategy}?",
	"This is really about {concept}, and that skill grows slowly with practice.",
	"When {trigger}, name the feeling first, then offer {strategy}.",
	"Children who {behavior} are often telling us something about {concept}.",
	"You might prepare {name} for the {event} by talking it through and rehearsing it.",
	"Small wins matter: {name} handling {skill} alone is real progress.",
	"Consider whether {worry} might be part of the picture, and keep notes for the {person}.",
	"Many parents find that {strategy} works best when it is introduced calmly, not in the middle of a conflict.",
	"Keep the expectations clear and the consequences calm and related.",
	"Could {name} teach you something about {interest}? Being the expert builds {concept}.",
	"It helps to check in with yourself too; a {parentFeeling} parent needs support as well.",
	"Reading together for ten minutes, even about {interest}, builds both connection and {skill}.",
	"Try to end each {time} with one thing that went well, however small.",
	"Give a five-minute warning before {routine} so the transition is expected.",
	"A quick conversation with the {person} could help you align on {strategy}.",
}

// textGen writes sentences for one facilitator from that facilitator's own
// random stream, so the data set is the same at every load.
type textGen struct {
	r *rand.Rand
}

// topic is what one conversation is mostly about, by slot: most slots
// reuse it, as a real conversation keeps coming back to the same subject.
type topic map[string]string

// topicPools are the slots a topic holds, in the order a new topic draws
// them.
var topicPools = []struct {
	slot string
	pool []string
}{
	{"skill", skills}, {"subject", subjects}, {"interest", interests}, {"behavior", behaviors},
	{"trigger", triggers}, {"strategy", strategies}, {"routine", routines}, {"event", events},
	{"worry", worries}, {"person", persons}, {"place", places},
}

func (g *textGen) newTopic() topic {
	t := topic{}
	for _, p := range topicPools {
		t[p.slot] = textgen.PickSkewed(g.r, p.pool)
	}
	return t
}

// turn writes one turn: a parent's message of one to three sentences, or a
// mentor's reply of two to five. child is the learner's name, or empty in
// the general conversation.
func (g *textGen) turn(role string, t topic, child string, age int) string {
	templates, n := userTemplates, 1+g.r.IntN(3)
	if role == "assistant" {
		templates, n = assistantTemplates, 2+g.r.IntN(4)
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.fill(textgen.Pick(g.r, templates), t, child, age))
	}
	if role == "user" {
		return g.typos(b.String())
	}
	return b.String()
}

// typos misspells about one longer word in fifty of a parent's message, as
// people typing on a phone do. Besides realism, the misspellings give each
// facilitator's search_vocabulary its long tail of words nobody else uses.
func (g *textGen) typos(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if len(w) < 5 || g.r.IntN(50) > 0 || strings.ContainsFunc(w, func(r rune) bool { return r >= utf8.RuneSelf }) {
			continue
		}
		k := 1 + g.r.IntN(len(w)-3) // keep the first letter and the last two bytes (a letter or punctuation)
		switch g.r.IntN(3) {
		case 0: // a letter dropped
			words[i] = w[:k] + w[k+1:]
		case 1: // two letters swapped
			words[i] = w[:k] + string(w[k+1]) + string(w[k]) + w[k+2:]
		default: // a letter doubled
			words[i] = w[:k+1] + w[k:]
		}
	}
	return strings.Join(words, " ")
}

// fill replaces each {slot} of a template. Topic slots keep the topic two
// times in three.
func (g *textGen) fill(tmpl string, t topic, child string, age int) string {
	return textgen.Capitalize(textgen.Fill(tmpl, func(slot string) string { return g.slot(slot, t, child, age) }))
}

func (g *textGen) slot(name string, t topic, child string, age int) string {
	keep := g.r.IntN(3) < 2
	if value, ok := t[name]; ok {
		if keep {
			return value
		}
		return drawWord(g.r, name)
	}
	switch name {
	case "name", "Name":
		if child != "" {
			return child
		}
		return textgen.Pick(g.r, childRefs)
	case "age":
		return strconv.Itoa(age)
	case "count":
		return strconv.Itoa(3 + g.r.IntN(25))
	}
	return drawWord(g.r, name)
}

// skewedPools are the words of the slots a generator has no value of its
// own for: common words come up more often than rare ones.
var skewedPools = map[string][]string{
	"skill": skills, "subject": subjects, "interest": interests, "behavior": behaviors,
	"trigger": triggers, "strategy": strategies, "routine": routines, "event": events,
	"worry": worries, "person": persons, "place": places, "feeling": feelings,
	"parentFeeling": parentFeelings, "time": times, "adj": adjectives, "noun": nouns,
	"concept": concepts, "professional": professionals, "activity": activities,
}

// evenPools are the names and days of such slots: any as likely as another.
var evenPools = map[string][]string{
	"friend": learnerNames, "town": towns, "pet": pets, "Weekday": weekdays, "job": jobs,
}

// drawWord fills a slot from its pool; a slot with none is left as its name.
func drawWord(r *rand.Rand, slot string) string {
	if pool, ok := skewedPools[slot]; ok {
		return textgen.PickSkewed(r, pool)
	}
	if pool, ok := evenPools[slot]; ok {
		return textgen.Pick(r, pool)
	}
	return slot
}

// searchQueries are what a facilitator types into the search box: two to
// five words, some naming a subject, a worry or a strategy, a few
// misspelled (which exercises the vocabulary correction).
var searchQueries = []string{
	"bedtime routine tablet",
	"struggling with fractions",
	"anxiety before the math test",
	"visual schedule for mornings",
	"reading aloud in class",
	"homework battles after school",
	"sticker chart not working",
	"friendship drama at recess",
	"meltdown after losing a game",
	"piano practice motivation",
	"sleepover separation anxiety",
	"spelling test nerves",
	"screen time limits weekend",
	"parent-teacher conference worries",
	"calm-down corner ideas",
	"gives up after one try",
	"talk to the school counsellor",
	"perfectionism and erasing work",
	"long division help",
	"clingy at drop-off",
	"breathing exercises when angry",
	"new baby sibling jealousy",
	"dyslexia reading below grade level",
	"Minecraft to motivate writing",
	"stomach aches on Mondays",
	"pomodoro timer for homework",
	"bullied at the playground",
	"essay structure persuasive writing",
	"lying about finished homework",
	"specific praise for effort",
	"morning chaos always late",
	"nightmares and sleep problems",
	"homwork fights",
	"bedtme routine",
	"fractons and decimals",
	"anxeity about school",
	"moving to middle school",
	"teacher says daydreams in class",
	"times tables games with dice",
	"weighted blanket sensory overload",
}
