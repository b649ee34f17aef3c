package searchquality

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"mentormemory/test/textgen"
)

// Questions that ask when something happened ("When did Max break his
// wrist?", "How long ago did we lose Noodle?"): the answer is a time that
// a turn states ("Max broke his wrist last week"), so the session holding
// it is the one whose turn about the event says when, while other sessions
// talk about the same thing without a time (the cast, the scar, the
// wish to ride without training wheels).
//
// Each account has a copy (key "<account>-when") with the same learners
// and the same history, plus, for each of a few events, the session that
// states it with its time and two sessions that mention it without one.
// The when questions are asked of the copy, so the accounts the other
// questions are asked of are exactly what they were, and so are their
// figures. All of it is drawn from a random stream of its own.

// KindWhen is a question that asks when something happened. It is scored
// apart from the other kinds, like KindDated.
const KindWhen = "when"

// whenSuffix makes the key of an account's copy that the when questions
// are asked of.
const whenSuffix = "-when"

// eventsPerAccount is how many events each copy adds.
const eventsPerAccount = 12

// decoysPerEvent is how many sessions mention an event without its time.
const decoysPerEvent = 4

// An eventTemplate is something that happened once, told with its time
// ({time}), and talked about again later without it.
type eventTemplate struct {
	id      string
	topic   string
	general bool
	who     string // "", "parent" or "teacher"
	age     string // "", "young" or "older"
	slots   []slot
	say     []string // each holds {time}
	reply   []string
	// follow goes on about the event in the same session, without a time.
	follow [][2]string
	// decoys mention the event in other sessions, in the words a question
	// about it uses, and never say when it happened.
	decoys [][2]string
	asks   []string
}

func (t *eventTemplate) fits(teacher bool, l *Learner) bool {
	if t.who == "parent" && teacher || t.who == "teacher" && !teacher {
		return false
	}
	if t.general != (l == nil) {
		return false
	}
	return l == nil || t.age == "" || (t.age == "young") == l.Young
}

var eventTemplates = []eventTemplate{
	{
		id: "broken-bone", topic: "health",
		slots: []slot{{"bone", []string{"wrist", "arm", "ankle", "collarbone", "elbow", "leg"}, false}},
		say: []string{
			"{L} broke {pos} {bone} {time} jumping off the trampoline.",
			"{L} fell off the monkey bars {time} and broke {pos} {bone}.",
		},
		reply:  []string{"Poor {L}. Bones heal fast at this age; quiet games and audiobooks help while the cast is on."},
		follow: [][2]string{{"{L} picked a bright green cast.", "Letting kids choose makes the cast feel less like a punishment."}},
		decoys: [][2]string{
			{"{L}'s {bone} still aches when it rains and the cast itches at night.", "Itchy casts are common; a hair dryer on the cool setting can help."},
			{"{L} is nervous about the doctor taking the cast off {pos} {bone}.", "Tell {obj} what the saw sounds like beforehand so it isn't scary."},
			{"{L} wants to play {sport} again but the doctor says the {bone} has to heal first.", "Keep {obj} part of the team by going to watch practice."},
			{"{L} needs help getting dressed because of the cast on {pos} {bone}.", "Loose clothes and slip-on shoes make mornings easier for now."},
		},
		asks: []string{"When did {L} break {pos} {bone}?", "How long ago did {L} break {pos} {bone}?",
			"When was it that {L} broke {pos} {bone}?"},
	},
	{
		id: "training-wheels", topic: "sports", age: "young",
		say: []string{
			"{L} rode {pos} bike without training wheels for the first time {time}!",
			"{Time}, {L} finally learned to ride {pos} bike with no training wheels.",
		},
		reply:  []string{"What a milestone! Balance comes all at once for most kids."},
		follow: [][2]string{{"{L} wants to ride around the block every evening now.", "Riding together is great exercise and time to talk."}},
		decoys: [][2]string{
			{"{L} wants to ride a bike without training wheels like the big kids.", "A balance bike or lowering the seat so feet touch the ground helps a lot."},
			{"We took the training wheels off {L}'s bike but {sub} is scared to try.", "Practice on grass, where falls hurt less, and keep sessions short."},
			{"{L} rides {pos} bike to {place} with {sib} now.", "Helmets every time, even for short rides."},
			{"{L} fell off {pos} bike and scraped both knees.", "Falls are part of learning; a quick hug and back on the bike."},
		},
		asks: []string{"When did {L} learn to ride a bike?", "When did {L} stop needing training wheels?",
			"How long ago did {L} learn to ride {pos} bike?"},
	},
	{
		id: "joined-group", topic: "friends",
		slots: []slot{{"group", []string{"the school choir", "the drama group", "the Lego league", "the junior lifeguards",
			"the hiking group", "the chess team", "the coding class"}, false}},
		say: []string{
			"{L} joined {group} {time} and already has a friend there.",
			"{Time}, {L} signed up for {group}, all on {pos} own.",
		},
		reply:  []string{"Doing something with kids who share an interest is a great way to make friends."},
		follow: [][2]string{{"{L} practices at home for {group} without being asked.", "That kind of motivation is worth protecting."}},
		decoys: [][2]string{
			{"{L} loves {group} and talks about it all through dinner.", "Ask {obj} to teach you something from it; kids love being the expert."},
			{"{group} meets after school, which pushes homework late for {L}.", "Homework before {group}, or a snack and a short start on it, can help."},
			{"{L} wants to quit {group} because it takes up every weekend.", "Ask what {sub} would miss about it before deciding."},
			{"{L} has a show coming up with {group} and is nervous.", "Practicing in front of the family can take the edge off."},
		},
		asks: []string{"When did {L} join {group}?", "How long has {L} been in {group}?", "When did {L} start {group}?"},
	},
	{
		id: "diagnosis", topic: "health",
		slots: []slot{{"condition", []string{"asthma", "eczema", "dyslexia", "celiac disease", "migraines", "scoliosis"}, false}},
		say: []string{
			"{L} was diagnosed with {condition} {time}.",
			"{Time}, the pediatrician told us {L} has {condition}.",
		},
		reply:  []string{"A diagnosis can be a relief; it gives you a plan and words to explain it to {L}."},
		follow: [][2]string{{"I'm reading everything I can about {condition}.", "Pick one or two trusted sources so it doesn't get overwhelming."}},
		decoys: [][2]string{
			{"Managing {L}'s {condition} at school takes so much planning.", "A short written plan for {teacher} saves a lot of back and forth."},
			{"{L} asked whether {condition} will ever go away.", "Answer honestly and simply, and focus on what {sub} can do."},
			{"We have a follow-up appointment about {L}'s {condition}.", "Write down your questions beforehand so nothing gets missed."},
			{"{L} doesn't want {pos} friends to know about the {condition}.", "Let {obj} decide who to tell; privacy matters at this age."},
		},
		asks: []string{"When was {L} diagnosed with {condition}?", "How long ago did {L} get the {condition} diagnosis?",
			"When did we find out {L} has {condition}?"},
	},
	{
		id: "new-friend", topic: "friends",
		slots: []slot{{"pal", []string{"Cosima", "Barnaby", "Ottilie", "Desmond", "Imogen", "Lysander", "Wren", "Atticus"}, false}},
		say: []string{
			"{L} met {pal} at the park {time}, and they've been inseparable since.",
			"{Time}, {L} met a new kid on the bus, {pal}, and now they sit together every day.",
		},
		reply:  []string{"A close friend makes such a difference to how a child feels about school."},
		follow: [][2]string{{"{L} and {pal} have the same favorite books.", "Shared interests make friendships stick."}},
		decoys: [][2]string{
			{"{L} and {pal} had a sleepover and stayed up way too late.", "A calm morning and an early night after usually sorts it out."},
			{"{L} wants {pal} to come to {pos} birthday party.", "Letting {obj} write the invitation makes it extra special."},
			{"{L} and {pal} had a fight about a game at recess.", "Friends fall out and make up; let them try to fix it first."},
			{"{pal}'s family invited {L} over for dinner.", "A good chance to get to know the parents too."},
		},
		asks: []string{"When did {L} meet {pal}?", "How long ago did {L} and {pal} become friends?"},
	},
	{
		id: "chapter-book", topic: "reading",
		say: []string{
			"{L} read a whole chapter book all by {obj}self for the first time {time}.",
			"{Time}, {L} finished {pos} first chapter book without any help.",
		},
		reply:  []string{"That's a huge step; celebrate it and let {obj} pick the next one."},
		follow: [][2]string{{"{L} wants to read the next book in the series right away.", "Series are great for keeping the momentum going."}},
		decoys: [][2]string{
			{"{L} says chapter books have too many words and not enough pictures.", "Graphic novels and illustrated chapter books are a good bridge."},
			{"{L} wants to read a chapter book on {pos} own like {sib}.", "Reading the first chapter together can get {obj} over the hump."},
			{"Which chapter books are good for {L}'s level?", "Short series with big print and a few pictures are a great fit."},
			{"{L} gave up on a chapter book halfway through.", "That's fine; let {obj} pick a different one without guilt."},
		},
		asks: []string{"When did {L} read {pos} first chapter book on {pos} own?",
			"How long ago did {L} finish a chapter book alone?"},
	},
	{
		id: "sleepwalking", topic: "sleep", who: "parent",
		say: []string{
			"{L} started sleepwalking {time}; we found {obj} in the kitchen at 2 am.",
			"{Time}, {L} began sleepwalking, and it scared us half to death.",
		},
		reply:  []string{"Sleepwalking is common in kids and usually outgrown. Keep doors locked and the stairs gated."},
		follow: [][2]string{{"{L} doesn't remember any of it in the morning.", "That's typical; there's no need to bring it up with {obj}."}},
		decoys: [][2]string{
			{"{L} was sleepwalking again and tried to open the front door.", "A simple door alarm will wake you if it happens."},
			{"Does sleepwalking mean {L} isn't getting enough sleep?", "Overtiredness can trigger it, so a steady bedtime helps."},
			{"Should I wake {L} up when {sub} is sleepwalking?", "Gently guide {obj} back to bed instead; waking can confuse {obj}."},
			{"The sleepwalking has {L}'s siblings worried.", "Explain it simply; it is common and not dangerous with a few precautions."},
		},
		asks: []string{"When did {L} start sleepwalking?", "How long ago did the sleepwalking start for {L}?"},
	},
	{
		id: "stitches", topic: "health",
		slots: []slot{{"where", []string{"chin", "forehead", "knee", "eyebrow", "lip"}, false}},
		say: []string{
			"{L} needed stitches in {pos} {where} {time} after a fall at the playground.",
			"{Time}, {L} cut {pos} {where} on the coffee table and got four stitches.",
		},
		reply:  []string{"Stitches look scary but heal quickly; keep it clean and dry as the doctor said."},
		follow: [][2]string{{"{L} was so brave at urgent care.", "Tell {obj} you noticed; kids remember that."}},
		decoys: [][2]string{
			{"{L} keeps touching the scar on {pos} {where} from the stitches.", "Sunscreen on the scar helps it fade."},
			{"{L} tells everyone at school about {pos} stitches.", "Owning the story is a healthy way to deal with it."},
			{"When can {L} go swimming with the stitches in {pos} {where}?", "Usually once they're out and the skin has closed; ask the doctor."},
			{"{L} is afraid of getting the stitches taken out.", "It's quick and mostly a tickle; say so honestly."},
		},
		asks: []string{"When did {L} get stitches in {pos} {where}?", "How long ago did {L} need stitches?"},
	},
	{
		id: "shoelaces", topic: "chores", who: "parent", age: "young",
		say: []string{
			"{L} tied {pos} own shoelaces for the first time {time}.",
			"{Time}, {L} learned to tie {pos} shoes with the bunny ears trick.",
		},
		reply:  []string{"Fine motor milestones like that are a big confidence boost."},
		follow: [][2]string{{"{L} now ties everyone's shoes, even the dog's leash.", "Let {obj} show off; it's practice."}},
		decoys: [][2]string{
			{"{L} still wants me to tie {pos} shoes every single morning.", "Velcro shoes for school days take the pressure off."},
			{"{L} gets frustrated when {pos} shoelaces come undone at recess.", "A double knot is an easy fix."},
			{"{L} wants shoes with laces like {pos} friends, but can't tie them yet.", "Practice on a shoe on the table, not on the foot."},
			{"Tying shoes takes {L} forever when we're running late.", "Build in five extra minutes rather than taking over."},
		},
		asks: []string{"When did {L} learn to tie {pos} shoes?", "How long ago did {L} start tying {pos} own shoelaces?"},
	},
	{
		id: "award", topic: "school",
		slots: []slot{{"prize", []string{"spelling bee", "art contest", "math olympiad", "poetry contest", "geography bee",
			"young authors contest"}, false}},
		say: []string{
			"{L} won the school {prize} {time}!",
			"{Time}, {L} took first place in the {prize}.",
		},
		reply:  []string{"Congratulations to {L}! Praise the practice that went into it, not only the prize."},
		follow: [][2]string{{"{L} hung the certificate over {pos} desk.", "A visible reminder of hard work paying off."}},
		decoys: [][2]string{
			{"{L} is practicing every evening for the {prize}.", "Short daily practice beats cramming."},
			{"{L} is nervous about the {prize} and wants to drop out.", "Talk through what the worst case really is; it's usually small."},
			{"{L}'s friend won the {prize} and {L} is jealous.", "Name the feeling, then talk about what {sub} could work toward."},
			{"Should {L} enter the {prize} again?", "If {sub} enjoyed it, yes; the experience counts more than the result."},
		},
		asks: []string{"When did {L} win the {prize}?", "How long ago did {L} win the {prize}?"},
	},
	{
		id: "first-phone", topic: "screens", who: "parent", age: "older",
		say: []string{
			"We gave {L} {pos} first phone {time}, with a lot of rules.",
			"{Time}, {L} got {pos} own phone for the walk home from school.",
		},
		reply:  []string{"A written phone agreement up front saves many arguments later."},
		follow: [][2]string{{"{L} already texts {pos} friends constantly.", "Set times when the phone lives in the kitchen."}},
		decoys: [][2]string{
			{"{L} wants to take {pos} phone to bed every night.", "Charging phones outside bedrooms is one of the best rules you can have."},
			{"{L} is on {pos} phone during homework again.", "Homework time can be phone-free time, with the phone in another room."},
			{"{L} broke the screen on {pos} phone.", "Let {obj} contribute to the repair; it teaches care."},
			{"Should I read {L}'s messages on {pos} phone?", "Agree on what you'll check and tell {obj} openly."},
		},
		asks: []string{"When did {L} get {pos} first phone?", "How long ago did we give {L} a phone?"},
	},
	{
		id: "transfer", topic: "school", who: "teacher",
		slots: []slot{{"oldschool", []string{"Lincoln Elementary", "Maple Grove", "Westside Academy", "Riverside School", "Oak Hill"}, false}},
		say: []string{
			"{L} transferred into my class from {oldschool} {time}.",
			"{Time}, {L} joined my class after leaving {oldschool}.",
		},
		reply:  []string{"A buddy for the first weeks helps a new student find their feet."},
		follow: [][2]string{{"{L} is still learning the routines.", "A picture schedule on the desk helps with that."}},
		decoys: [][2]string{
			{"{L} still talks about {pos} friends at {oldschool}.", "Missing old friends is normal; a pen-pal letter can help."},
			{"{L} says {oldschool} did math differently.", "Ask {obj} to show you their way; it tells you what {sub} knows."},
			{"{L}'s records from {oldschool} still haven't arrived.", "The office can call them directly; it's usually faster."},
			{"{L}'s mom says {L} was happier at {oldschool}.", "Share the small wins you see in class; it helps her see the other side."},
		},
		asks: []string{"When did {L} transfer from {oldschool}?", "When did {L} join my class?"},
	},
	{
		id: "reading-group", topic: "reading", who: "teacher",
		slots: []slot{{"rgroup", []string{"Owls", "Foxes", "Dolphins", "Eagles"}, false}},
		say: []string{
			"{L} moved up to the {rgroup} reading group {time}.",
			"{Time}, I moved {L} up into the {rgroup} reading group.",
		},
		reply:  []string{"Moving up is a great motivator; keep an eye on how {sub} copes with the harder books."},
		follow: [][2]string{{"{L} is proud to be in a new group.", "Let {obj} know the effort is what got {obj} there."}},
		decoys: [][2]string{
			{"{L} wants to be in the {rgroup} reading group with {pos} friends.", "Explain what skills the group works on so the goal is concrete."},
			{"The {rgroup} reading group is getting too big to run well.", "Splitting it into two smaller groups may help."},
			{"{L} finds the {rgroup} reading group books too hard.", "Preview the vocabulary with {obj} before the group meets."},
			{"What should the {rgroup} reading group read next?", "Let the group vote between two options you've chosen."},
		},
		asks: []string{"When did {L} move up to the {rgroup} reading group?", "How long has {L} been in the {rgroup} group?"},
	},
	{
		id: "pet-died", topic: "family", general: true, who: "parent",
		slots: []slot{{"oldpet", []string{"guinea pig", "goldfish", "parakeet", "turtle"}, false},
			{"oldpetname", []string{"Noodle", "Sprinkles", "Captain", "Peanut", "Bubbles"}, false}},
		say: []string{
			"Our old {oldpet}, {oldpetname}, died {time}, and {kids} took it hard.",
			"{Time}, we had to say goodbye to {oldpetname}, our {oldpet}.",
		},
		reply:  []string{"Losing a pet is often a child's first grief. Let them talk about it and plan a small goodbye."},
		follow: [][2]string{{"{kids} drew pictures for the goodbye.", "Rituals like that help children process loss."}},
		decoys: [][2]string{
			{"{kids} still talk about {oldpetname} every night at dinner.", "Sharing memories is healthy; a photo book could be nice."},
			{"{kids} want to plant a tree for {oldpetname} in the yard.", "That's a lovely way to remember a pet together."},
			{"{kids} are asking for a new pet to replace {oldpetname}.", "Wait until the grief has eased so the new pet isn't a replacement."},
			{"We made a photo album of {oldpetname} with {kids}.", "Looking back together is a gentle way to grieve."},
		},
		asks: []string{"When did {oldpetname} die?", "How long ago did we lose {oldpetname}?"},
	},
	{
		id: "new-school", topic: "planning", general: true, who: "parent",
		slots: []slot{{"newschool", []string{"Brookside Elementary", "Cedar Park School", "Hillcrest Academy", "Lakeview Elementary"}, false}},
		say: []string{
			"We switched {kids} to {newschool} {time}.",
			"{Time}, {kids} started at {newschool}.",
		},
		reply:  []string{"New schools take a few months to feel like home; keep in touch with the teachers early on."},
		follow: [][2]string{{"The drop-off line is much shorter at least.", "Small wins like that make mornings calmer."}},
		decoys: [][2]string{
			{"{kids} like {newschool}, but the homework load is heavier.", "Ask the teachers what a typical night should look like."},
			{"Should we get more involved in the parent group at {newschool}?", "Even one event a term helps you get to know other families."},
			{"The bus to {newschool} leaves so early.", "Lay out clothes the night before to save the morning."},
			{"{kids} made new friends at {newschool}.", "Invite them over; it helps the friendships grow."},
		},
		asks: []string{"When did the kids start at {newschool}?", "How long ago did we switch to {newschool}?"},
	},
	{
		id: "field-trip-taken", topic: "classroom", general: true, who: "teacher",
		slots: []slot{{"tripto", []string{"the planetarium", "the apple orchard", "the aquarium", "the fire station", "the pumpkin farm"}, false}},
		say: []string{
			"My class went on a field trip to {tripto} {time}.",
			"{Time}, I took the class to {tripto}, and it was chaos in the best way.",
		},
		reply:  []string{"Trips stick in kids' memories; a writing prompt about it keeps the learning going."},
		follow: [][2]string{{"Two parents volunteered as chaperones.", "Thank them publicly; it helps next time."}},
		decoys: [][2]string{
			{"My class keeps asking to go back to {tripto}.", "Use their excitement for a research project."},
			{"Collecting permission slips for {tripto} is a nightmare.", "A digital form with reminders takes the chase off your plate."},
			{"Some kids in my class got overexcited at {tripto}.", "Go over expectations before the next outing, with a buddy system."},
			{"My class is writing thank-you letters to {tripto}.", "A great writing exercise with a real audience."},
		},
		asks: []string{"When did my class go to {tripto}?", "When was the field trip to {tripto}?"},
	},
	{
		id: "student-teacher", topic: "classroom", general: true, who: "teacher",
		slots: []slot{{"trainee", []string{"Mr. Abernathy", "Ms. Quintero", "Mr. Valdez", "Ms. Okonkwo"}, false}},
		say: []string{
			"{trainee} started as my student teacher {time}.",
			"{Time}, I got a student teacher, {trainee}.",
		},
		reply:  []string{"Giving a student teacher one small group to own is a good start for everyone."},
		follow: [][2]string{{"The class already loves {trainee}.", "Warmth goes a long way with third graders."}},
		decoys: [][2]string{
			{"{trainee} led the read-aloud and the class hung on every word.", "Give feedback on one thing at a time."},
			{"{trainee} struggles with transitions after recess.", "Model a transition routine and let them copy it."},
			{"{trainee} wants to plan a whole science unit.", "Let them draft it and meet to review before teaching."},
			{"I have to write an evaluation for {trainee}.", "Start with specific strengths, then one or two goals."},
		},
		asks: []string{"When did {trainee} start in my class?", "How long ago did {trainee} start as my student teacher?"},
	},
}

// whenAccounts makes, for each account, its copy with the event sessions,
// and the when questions asked of it.
func whenAccounts(seed uint64, accounts []Facilitator) ([]Facilitator, []Question) {
	var out []Facilitator
	var qs []Question
	for i := range accounts {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+201))
		f, q := whenAccount(rng, &accounts[i])
		out = append(out, f)
		qs = append(qs, q...)
	}
	return out, qs
}

func whenAccount(rng *rand.Rand, of *Facilitator) (Facilitator, []Question) {
	f := *of
	f.Key = of.Key + whenSuffix
	f.Learners = slices.Clone(of.Learners)
	f.Sessions = nil
	for _, s := range of.Sessions {
		s.Turns = slices.Clone(s.Turns)
		f.Sessions = append(f.Sessions, s)
	}

	type event struct {
		tmpl    *eventTemplate
		learner *Learner
		fl      *filler
		answer  Session
		decoys  []Session
		said    string
	}
	var events []*event
	used := map[string]bool{}
	for _, ti := range rng.Perm(len(eventTemplates)) {
		if len(events) == eventsPerAccount {
			break
		}
		t := &eventTemplates[ti]
		var learner *Learner
		if !t.general {
			var ok []*Learner
			for i := range f.Learners {
				if t.fits(f.Teacher, &f.Learners[i]) {
					ok = append(ok, &f.Learners[i])
				}
			}
			if len(ok) == 0 {
				continue
			}
			learner = textgen.Pick(rng, ok)
		} else if !t.fits(f.Teacher, nil) {
			continue
		}
		vars := contextVars(&f, learner)
		for _, s := range t.slots {
			vars[s.name] = drawUnused(rng, s.pool, used)
		}
		at := time.Date(2022, time.March, 1, 18, 0, 0, 0, time.UTC).
			AddDate(0, 0, rng.IntN(1000)).Add(time.Duration(rng.IntN(180)) * time.Minute)
		phrase := eventTime(rng, at)
		vars["time"], vars["Time"] = phrase, textgen.Capitalize(phrase)
		ev := &event{tmpl: t, learner: learner, fl: newFiller(rng, vars)}
		ev.said = sentence(ev.fl.fill(textgen.Pick(rng, t.say)))
		topic := t.topic
		if f.Teacher && topics[topic].parentOnly {
			topic = "school"
		}
		plan := func(statement, reply string, follow [][2]string) *sessionPlan {
			return &sessionPlan{learner: learner, topic: topic, facts: []*fact{{
				tmpl: &factTemplate{follow: follow}, learner: learner, filler: ev.fl,
				statement: statement, reply: sentence(ev.fl.fill(reply)),
			}}}
		}
		ev.answer = buildSession(rng, &f, plan(ev.said, textgen.Pick(rng, t.reply), t.follow))
		ev.answer.At = at
		for _, k := range rng.Perm(len(t.decoys))[:decoysPerEvent] {
			d := t.decoys[k]
			s := buildSession(rng, &f, plan(sentence(ev.fl.fill(d[0])), d[1], nil))
			s.At = time.Date(2022, time.January, 10, 18, 0, 0, 0, time.UTC).
				AddDate(0, 0, rng.IntN(1050)).Add(time.Duration(rng.IntN(180)) * time.Minute)
			ev.decoys = append(ev.decoys, s)
		}
		events = append(events, ev)
	}

	// The new sessions go among the copied ones, where they fall; an
	// event's answer is known by a provisional id until all are numbered.
	for k, ev := range events {
		ev.answer.ID = fmt.Sprint("event ", k)
		for _, s := range append([]Session{ev.answer}, ev.decoys...) {
			f.Sessions = slices.Insert(f.Sessions, rng.IntN(len(f.Sessions)+1), s)
		}
	}
	answerOf := map[string]string{}
	for i := range f.Sessions {
		s := &f.Sessions[i]
		id := fmt.Sprintf("%s-s%02d", f.Key, i+1)
		if strings.HasPrefix(s.ID, "event ") {
			answerOf[s.ID] = id
		}
		s.ID = id
		for j := range s.Turns {
			s.Turns[j].ID = fmt.Sprintf("%s-t%03d", s.ID, j+1)
		}
	}

	seen := map[string]bool{}
	var qs []Question
	for k, ev := range events {
		answer := answerOf[fmt.Sprint("event ", k)]
		n := 1
		if rng.IntN(2) == 0 {
			n = 2
		}
		for _, k := range rng.Perm(len(ev.tmpl.asks))[:min(n, len(ev.tmpl.asks))] {
			text := casual(rng, sentence(ev.fl.fill(ev.tmpl.asks[k])))
			if key := strings.ToLower(text); !seen[key] && sharedRun(text, ev.said, 5) == "" {
				seen[key] = true
				qs = append(qs, Question{Facilitator: f.Key, Text: text, Kind: KindWhen, SessionID: answer, Evidence: ev.said})
			}
		}
	}
	return f, qs
}

// eventTime names when an event told at at happened, the way people say
// it: most often relative to that day ("last week", "two years ago"), or
// a day, a month or a year, and now and then in words no calendar reads
// ("right after Thanksgiving"), as people also do.
func eventTime(rng *rand.Rand, at time.Time) string {
	back := at.AddDate(0, 0, -(3 + rng.IntN(40)))
	switch r := rng.IntN(20); {
	case r < 11:
		return textgen.Pick(rng, []string{"yesterday", "last night", "this morning", "two days ago", "a few days ago",
			"last week", "last weekend", "the other day", "two weeks ago", "last month", "a couple of months ago",
			"three months ago", "last year", "two years ago", "last summer", "this past weekend"})
	case r < 14:
		day, month := back.Day(), back.Month()
		return textgen.Pick(rng, []string{
			fmt.Sprintf("on %d %s", day, month),
			fmt.Sprintf("on %s %d", month, day),
			fmt.Sprintf("on the %d%s of %s", day, ordinal(day), month),
		})
	case r < 17:
		earlier := at.AddDate(0, -(1 + rng.IntN(5)), 0)
		return textgen.Pick(rng, []string{
			fmt.Sprintf("in %s", earlier.Month()),
			fmt.Sprintf("back in %s %d", earlier.Month(), earlier.Year()),
			fmt.Sprintf("in %d", at.Year()-1-rng.IntN(2)),
		})
	}
	return textgen.Pick(rng, []string{"right after Thanksgiving", "over spring break", "at the start of the school year",
		"around Christmas", "before the holidays"})
}

func ordinal(day int) string {
	if s := ordinals[day]; s != "" {
		return s
	}
	return "th"
}
