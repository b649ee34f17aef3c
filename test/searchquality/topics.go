package searchquality

// The distractor material: word pools and, per topic, what a facilitator
// says and what the mentor answers. Every session draws most of its turns
// from here, so the learners' names, "homework", "school", "reading" and
// "help" are everywhere, and several sessions of one learner share a topic
// with the session that holds a fact. Fact-specific values (the piano
// teacher's name, the allergen) live in facts.go and never appear here.

// pools are the word pools placeholders draw from.
var pools = map[string][]string{
	"subject": {"math", "spelling", "science", "social studies", "writing", "history", "geography",
		"reading comprehension", "vocabulary", "art"},
	"feeling": {"frustrated", "anxious", "proud", "bored", "tired", "excited", "overwhelmed", "grumpy",
		"discouraged", "restless", "clingy", "cranky", "teary", "distracted", "wound up"},
	"day":  {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"},
	"when": {"after dinner", "before school", "right after school", "on Sunday", "in the car", "at bedtime", "during breakfast", "this afternoon", "last night", "yesterday", "this morning", "over the weekend"},
	"min":  {"10", "15", "20", "25", "30", "40", "45"},
	"book": {"Magic Tree House", "Dog Man", "Diary of a Wimpy Kid", "Ivy and Bean", "Junie B. Jones",
		"The Boxcar Children", "Geronimo Stilton", "Amelia Bedelia", "Captain Underpants", "Nate the Great",
		"Charlotte's Web", "Frog and Toad", "Mercy Watson", "Elephant and Piggie", "Stink"},
	"friend": {"Olivia", "Liam", "Sophia", "Lucas", "Isabella", "Mateo", "Harper", "Elijah", "Amara",
		"Caleb", "Nora", "Henry", "Chloe", "Omar", "Grace", "Dylan", "Ruby", "Kai", "Hazel", "Theo"},
	"place": {"the library", "the park", "grandma's house", "the museum", "the pool", "the grocery store",
		"the playground", "the farmers market", "the beach", "the zoo", "the bookstore", "the nature center"},
	"mathskill": {"fractions", "long division", "times tables", "place value", "telling time", "counting money",
		"subtraction with regrouping", "decimals", "multi-digit multiplication", "number bonds", "skip counting",
		"rounding", "measurement", "area and perimeter"},
	"mathgame": {"war with playing cards", "math bingo", "dice addition", "a pretend shop", "multiplication tic-tac-toe",
		"a number line hop", "Yahtzee"},
	"game": {"Minecraft", "Roblox", "Fortnite", "Mario Kart", "Animal Crossing", "Pokemon", "Zelda"},
	"unit": {"the solar system", "ancient Egypt", "the water cycle", "plants", "simple machines", "the human body",
		"weather", "habitats", "maps", "the rainforest", "magnets", "Native American history", "electricity", "fossils"},
	"activity": {"drawing", "building Lego", "baking", "playing outside", "riding bikes", "board games", "puzzles",
		"crafts", "gardening", "a walk with the dog"},
	"snack":  {"apple slices", "cheese sticks", "crackers", "yogurt", "granola bars", "popcorn", "grapes", "pretzels", "carrot sticks", "peanut butter toast"},
	"animal": {"dragons", "cats", "dinosaurs", "sharks", "horses", "robots", "aliens", "penguins"},
	"n":      {"two", "three", "four", "five"},
	"chore":  {"setting the table", "making the bed", "putting shoes away", "sorting laundry", "watering plants", "wiping the table"},
	"mood":   {"a rough", "a good", "a long", "a weird", "an easy", "a busy", "a tough", "a calm"},
}

// Per-learner profile pools: each learner of a family gets distinct values.
var (
	instruments    = []string{"piano", "violin", "guitar", "cello", "flute", "trumpet", "ukulele", "clarinet", "drums"}
	sports         = []string{"soccer", "basketball", "gymnastics", "hockey", "baseball", "swimming", "karate", "tennis", "volleyball"}
	schoolTeachers = []string{"Ms. Carter", "Mr. Hughes", "Mrs. Patel", "Ms. Brooks", "Mr. Reyes", "Mrs. Lee",
		"Ms. Dunn", "Mr. Foster", "Mrs. Kim", "Ms. Grant"}
	familyPets = []string{"dog", "cat", "hamster", "bunny"}
	petNames   = []string{"Biscuit", "Luna", "Pepper", "Mochi", "Ziggy", "Waffles", "Scout", "Juniper"}
)

type topic struct {
	user      []string
	assistant []string
	// parentOnly topics are not what a teacher talks about (bedtime,
	// allowance); teacherOnly ones not what a parent does.
	parentOnly, teacherOnly, general bool
}

// topicsFor lists the topics a session may have.
func topicsFor(teacher, general bool) []string {
	var out []string
	for _, name := range topicOrder {
		t := topics[name]
		if t.general != general || (teacher && t.parentOnly) || (!teacher && t.teacherOnly) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// topicOrder fixes the iteration order (maps have none), which keeps the
// generator deterministic.
var topicOrder = []string{"reading", "math", "homework", "sleep", "screens", "friends", "emotions", "sports",
	"music", "school", "writing", "health", "chores", "science", "planning", "family", "classroom"}

var topics = map[string]topic{
	"reading": {
		user: []string{
			"{L} read for {min} minutes {when} without me asking.",
			"Getting {L} to fill in {pos} reading log is a daily battle.",
			"{L} keeps skipping small words when {sub} reads aloud.",
			"{L} says reading is boring unless it's {book}.",
			"We went to {place} and {L} picked out three new books.",
			"{teacher} says {L}'s reading comprehension is a little below grade level.",
			"{L} can sound out words but forgets what happened on the page before.",
			"I read with {L} {when}, but {sub} gets {feeling} after a few pages.",
			"{L} wants to read the same {book} book over and over.",
			"Should {L} be reading chapter books by now? {Sub} is in {grade}.",
			"{L} finished {pos} reading homework early and asked for more.",
			"{L} guesses at long words instead of reading them.",
			"We tried reading {book} together {when} and {L} loved the pictures.",
		},
		assistant: []string{
			"Rereading a favorite like {book} builds fluency, so let {obj} enjoy it.",
			"Try taking turns reading pages so {L} doesn't tire out.",
			"Ask {L} to retell the chapter in three sentences before moving on.",
			"A reading log works better with a small reward at the end of the week.",
			"Pick books slightly below {pos} level for reading alone and harder ones for reading together.",
			"Short daily reading beats one long session on the weekend.",
			"Let {L} choose the book; ownership makes reading feel less like homework.",
			"Audiobooks alongside the printed book can help {obj} follow the story.",
			"If {sub} skips words, have {obj} track the line with a finger or a bookmark.",
			"Ask {teacher} which reading strategies the class is practicing so you can use the same words.",
		},
	},
	"math": {
		user: []string{
			"{L} is stuck on {mathskill} and gets {feeling} fast.",
			"Math homework took over an hour {when}.",
			"{L} knows {pos} facts but freezes on word problems.",
			"{L} counts on {pos} fingers for everything.",
			"{L}'s {subject} grades are fine but math is slipping.",
			"We practiced {mathskill} with flash cards for {min} minutes.",
			"{L} says {sub} is bad at math, which breaks my heart.",
			"The new math curriculum confuses me too, honestly.",
			"{L} rushed through the math worksheet and made careless mistakes.",
			"{teacher} sent home a note that {L} needs more practice with {mathskill}.",
			"{L} actually asked to do math {when}, which never happens.",
		},
		assistant: []string{
			"Use objects like coins or blocks so {mathskill} feels concrete.",
			"Break the worksheet into chunks of five problems with a short break.",
			"When {L} says {sub} is bad at math, point to something {sub} solved last week.",
			"For word problems, have {obj} draw a picture before writing any numbers.",
			"A quick game of {mathgame} can practice facts without the fight.",
			"Ask {obj} to check each answer by working backwards.",
			"Fingers are fine for now; fluency comes with practice.",
			"Ask {teacher} which strategy the class uses so home and school match.",
			"Ten minutes of {mathskill} a day will do more than an hour on Sunday.",
		},
	},
	"homework": {
		user: []string{
			"Homework time turned into a meltdown again {when}.",
			"{L} forgets to bring {pos} homework folder home.",
			"I don't know how much I should help {L} with homework.",
			"{L} does homework at the kitchen table but gets distracted by everyone.",
			"{L} had {subject} homework and a project due the same day.",
			"{L} says {sub} finished {pos} homework at school but {sub} hadn't.",
			"The homework load in {grade} feels like a lot this year.",
			"We tried doing homework right after school and it went better.",
			"{L} needs help with every single homework question.",
			"{L} cried over {subject} homework {when}.",
		},
		assistant: []string{
			"A consistent homework spot and time can take a lot of the arguing out.",
			"Help {L} start the first problem, then step away and check back.",
			"A checklist on the folder can help {obj} remember what comes home.",
			"Let {obj} have a snack and some movement before homework starts.",
			"If homework regularly takes over an hour, it is worth telling {teacher}.",
			"A timer for {min} minutes of focus and a five minute break often helps.",
			"Praise the effort you see, not only finished pages.",
			"Sit nearby doing your own work; it keeps {obj} company without hovering.",
		},
	},
	"sleep": {
		parentOnly: true,
		user: []string{
			"{L} has been fighting bedtime every night this week.",
			"{L} keeps getting out of bed asking for water.",
			"{L} wakes up grumpy and it's hard to get out the door for school.",
			"Bedtime slides later and later on weekends.",
			"{L} says {sub} can't fall asleep because {pos} mind is busy.",
			"{L} had a nightmare and ended up in our bed.",
			"I think {L} isn't getting enough sleep on school nights.",
			"{L} reads under the covers with a flashlight way past bedtime.",
		},
		assistant: []string{
			"A predictable wind-down routine helps: bath, book, lights out.",
			"Keep the same wake-up time on weekends so bedtime doesn't drift.",
			"A worry notebook next to the bed can help a busy mind settle.",
			"Give {obj} one bedtime pass for a drink or a hug, then it's used up.",
			"Dim the lights half an hour before bed to signal sleep time.",
			"Most kids in {grade} need around ten hours of sleep.",
		},
	},
	"screens": {
		parentOnly: true,
		user: []string{
			"{L} begs for the tablet the minute {sub} gets home from school.",
			"Taking away video games causes huge arguments with {L}.",
			"{L} watched videos for two hours {when} and I lost track.",
			"Should {L} have {pos} own phone at this age?",
			"{L} plays {game} with friends online and won't stop when I ask.",
			"We tried a screen-free weekend and {L} handled it surprisingly well.",
			"{L} sneaks the laptop into {pos} room after homework.",
		},
		assistant: []string{
			"Give a five minute warning before screens go off, then stick to it.",
			"Screens after homework and chores, not before, makes it a clear rule.",
			"Keep devices out of the bedroom at night.",
			"Let {L} help write the family screen rules so {sub} owns them.",
			"Replace some screen time with something {sub} enjoys, like {activity}.",
			"Playing {game} together once in a while shows {obj} you're interested.",
		},
	},
	"friends": {
		user: []string{
			"{L} says nobody played with {obj} at recess today.",
			"{L} had a falling out with {friend} over a game.",
			"{L} wants a sleepover with {friend} this weekend.",
			"{L} is shy in groups but fine one on one.",
			"A kid at school called {L} a name and {sub} came home upset.",
			"{L} doesn't know how to join in when others are already playing.",
			"{L} had a great playdate with {friend} at {place}.",
			"{L} and {friend} are in a new group at lunch and it's going well.",
		},
		assistant: []string{
			"Role-play how to ask to join a game; it builds confidence.",
			"Invite one friend over at a time; small playdates are easier.",
			"Ask {teacher} who {L} seems to get along with in class.",
			"Listen first before problem-solving; {sub} may just need to vent.",
			"Friendship fights at this age usually blow over in a day or two.",
			"Praise {L} when {sub} includes someone new.",
		},
	},
	"emotions": {
		user: []string{
			"{L} had a huge meltdown over something tiny {when}.",
			"{L} gets so {feeling} when things don't go {pos} way.",
			"{L} cried before school and didn't want to go in.",
			"{L} has been really {feeling} lately and I don't know why.",
			"{L} slams doors when {sub}'s angry.",
			"{L} says {sub}'s stupid whenever {sub} makes a mistake.",
			"{L} was {feeling} all day {home}.",
		},
		assistant: []string{
			"Name the feeling for {obj}: saying you're frustrated because of this calms things faster than reasoning.",
			"Talk about it later when everyone is calm, not during the meltdown.",
			"A calm-down corner with a few sensory tools can help.",
			"Model making mistakes out loud so {L} sees it's normal.",
			"If worries before school continue, a quick chat with the school counselor could help.",
			"Notice and praise the times {sub} handles frustration well.",
			"Deep breaths like blowing out birthday candles are easy for kids to remember.",
		},
	},
	"sports": {
		user: []string{
			"{L} has {sport} practice on {day} and comes home exhausted.",
			"{L} wants to quit {sport} halfway through the season.",
			"{L} got upset after {pos} {sport} game because {sub} didn't get to play much.",
			"Between {sport} and homework, {L} has no downtime.",
			"{L} scored in {pos} {sport} game and was so proud.",
			"{L}'s {sport} schedule is eating our whole weekend.",
		},
		assistant: []string{
			"Finishing the season teaches commitment, then {sub} can decide about next year.",
			"Plan homework for the car or right before practice on busy days.",
			"Ask {L} what {sub} enjoys about {sport} beyond winning.",
			"Make sure {sub} eats a real snack like {snack} before practice.",
			"Protect one afternoon a week with nothing scheduled.",
		},
	},
	"music": {
		user: []string{
			"{L} refuses to practice {instrument} unless I sit with {obj}.",
			"{L} has a {instrument} recital coming up and is nervous.",
			"Practicing {instrument} every day is turning into a fight.",
			"{L} wants to switch from {instrument} to something louder, ha.",
			"{L} played {pos} {instrument} piece for grandma and loved it.",
			"{L} rushes through {instrument} practice in five minutes.",
		},
		assistant: []string{
			"Short practice sessions of {min} minutes beat one long one.",
			"Let {obj} perform for the family before the recital to ease the nerves.",
			"A practice chart with stickers can keep {instrument} practice going.",
			"Let {obj} pick one fun song to play after the assigned pieces.",
			"Practice right after a snack, before screens, tends to stick.",
		},
	},
	"school": {
		user: []string{
			"{teacher} emailed about {L}'s behavior in class.",
			"Report cards came home; {L} is doing well except {subject}.",
			"I have a meeting with {teacher} next week. What should I ask?",
			"{L} says school is boring and {sub} has no one to sit with.",
			"{L}'s class is starting a unit on {unit}.",
			"The school wants to test {L} for the gifted program.",
			"{L} got a note home for talking during {subject}.",
			"{L} loves {teacher} and talks about school all the time now.",
		},
		assistant: []string{
			"Go in with two or three specific questions and one thing that's going well.",
			"Ask {teacher} what {sub} sees in class that you don't see at home.",
			"Keep a short note of what you agree on so you can follow up.",
			"It helps to tell {L} that you and {teacher} are on the same team.",
			"A unit on {unit} is a great excuse for a library trip.",
		},
	},
	"writing": {
		user: []string{
			"{L}'s handwriting is very hard to read.",
			"{L} hates writing and says {sub} has nothing to write about.",
			"{L} has to write a paragraph about {unit} and is stuck.",
			"Spelling words this week are tough for {L}.",
			"{L} wrote a funny story about {animal} and wanted to read it to everyone.",
			"{L} reverses b and d when {sub} writes.",
		},
		assistant: []string{
			"Let {obj} talk the ideas out loud first, then write them down.",
			"A quick list of words for the topic makes getting started easier.",
			"Keep handwriting practice short and fun, like writing a grocery list.",
			"For spelling, practice in sand, shaving cream or with magnets.",
			"Letter reversals are still common in {grade}; gentle practice is enough.",
		},
	},
	"health": {
		parentOnly: true,
		user: []string{
			"{L} is such a picky eater, {sub} only wants pasta.",
			"{L} complained of stomach aches before school again.",
			"{L} has a doctor appointment for {pos} checkup on {day}.",
			"Packing lunches {L} actually eats is a daily puzzle.",
			"{L} has been sniffly and missed two days of school.",
			"{L} is growing so fast; nothing fits anymore.",
		},
		assistant: []string{
			"Offer one new food next to two foods {sub} likes, with no pressure.",
			"Frequent stomach aches before school can be worry; worth mentioning to the doctor.",
			"Let {obj} help pack {pos} own lunch from a few choices, like {snack}.",
			"After missing school, ask {teacher} for just the key work.",
		},
	},
	"chores": {
		parentOnly: true,
		user: []string{
			"{L} never puts {pos} laundry away.",
			"I want {L} to help more around the house.",
			"{L} forgets {pos} jobs unless I remind {obj} five times.",
			"{L} actually liked {chore} {when}.",
		},
		assistant: []string{
			"A picture chore chart works well at this age.",
			"Tie chores to routines, like clearing plates after dinner.",
			"Keep it to two or three jobs so it's doable.",
			"Let {L} pick one job from a short list, like {chore}.",
		},
	},
	"science": {
		user: []string{
			"{L} asked me why the sky is blue and I had no idea.",
			"{L} loves experiments; we made slime {when}.",
			"{L}'s class project on {unit} is due soon.",
			"{L} collected bugs at {place} and wants to keep them.",
			"{L} asks a hundred questions about {unit} every day.",
		},
		assistant: []string{
			"Follow {pos} questions with a simple experiment {home}.",
			"A nature journal is a great way to channel that curiosity.",
			"Let {L} plan the project steps on a calendar.",
			"Library books on {unit} with lots of pictures work well for {grade}.",
		},
	},
	"planning": {
		general: true, parentOnly: true,
		user: []string{
			"I need help planning our week; everything feels chaotic.",
			"How should I balance homework and activities for {kids}?",
			"Our mornings are rushed and someone is always late for school.",
			"I want to set up a family calendar on the fridge.",
			"We have a long weekend coming up. Any ideas for keeping {kids} busy?",
			"I'm exhausted; I feel like I'm doing all the school stuff alone.",
			"I'm thinking about a quiet reading hour for everyone on Sundays.",
			"Summer is coming and I have no plan for {kids} yet.",
		},
		assistant: []string{
			"Block the week into school, activities and free time so you can see the overload.",
			"Lay out clothes and pack bags the night before to calm the mornings.",
			"A shared calendar helps everyone see what's coming.",
			"Schedule some time for yourself, even twenty minutes; it's not optional.",
			"Pick one thing to simplify this week rather than everything at once.",
			"A simple routine for {kids} beats a perfect plan.",
		},
	},
	"family": {
		general: true, parentOnly: true,
		user: []string{
			"{L1} and {L2} fought all afternoon over nothing.",
			"Sibling rivalry is wearing me down.",
			"Grandparents are visiting next week and routines will be off.",
			"We're trying to do family dinners without phones.",
			"{L1} feels like {L2} gets more attention.",
		},
		assistant: []string{
			"Give each child a little one-on-one time; it reduces the competition.",
			"Let them solve small conflicts themselves and step in only for safety.",
			"Keep bedtime and homework routines even when family visits.",
			"A weekly family meeting gives everyone a voice.",
		},
	},
	"classroom": {
		general: true, teacherOnly: true,
		user: []string{
			"My class was wild after recess today.",
			"I'm planning a reading unit for {kids} and need ideas.",
			"Half my students didn't turn in their homework this week.",
			"How do I keep early finishers busy without more worksheets?",
			"Parent conferences are next week and I'm behind on notes.",
			"Transitions between subjects eat up so much time.",
		},
		assistant: []string{
			"A visual schedule on the board makes transitions smoother.",
			"A quiet reading corner with choice books keeps early finishers busy.",
			"A short movement break after recess resets the room.",
			"Keep conference notes to one strength and one goal per student.",
			"A homework check-in at morning meeting catches missing work early.",
		},
	},
	"smalltalk": {
		user: []string{
			"Thanks, that really helps.",
			"Okay, I'll try that {when}.",
			"That makes sense, I'll talk to {L} about it.",
			"How do I keep {L} motivated with school stuff?",
			"{L} had a lot of homework today and was tired.",
			"Reading time went okay today.",
			"Can you help me think this through?",
			"School has been busy for {L} lately.",
			"I feel like I'm always nagging {L} about homework.",
			"{L} said school was fine, which is all I ever get.",
			"We had {mood} day {home}.",
			"{L} had {mood} week at school.",
		},
		assistant: []string{
			"You're welcome. Let me know how it goes with {L}.",
			"Small steady steps work better than big changes.",
			"That's a good instinct; trust it.",
			"Check in with {L} at the end of the week and adjust.",
			"Of course. What feels most urgent right now?",
			"Try asking {L} about the best part of {pos} day instead of how school was.",
			"Consistency matters more than the exact plan.",
			"I'm glad to help. What did {L} say about it?",
		},
	},
	"smalltalk-general": {
		user: []string{
			"Thanks, that really helps.",
			"Okay, I'll try that {when}.",
			"Can you help me think this through?",
			"School has been busy for everyone lately.",
			"We had {mood} day {home}.",
			"It was {mood} week for {kids}.",
		},
		assistant: []string{
			"You're welcome. Let me know how it goes.",
			"Small steady steps work better than big changes.",
			"Of course. What feels most urgent right now?",
			"Consistency matters more than the exact plan.",
		},
	},
}

var (
	openers = []string{
		"Quick question about {L}.", "I wanted to check in about {L}.", "Can I get your help with something?",
		"Things have been hectic this week.", "We had a rough afternoon.", "Good news and bad news today.",
		"Update on {L}.", "I need some help with {L}.", "So, about {L} again.",
	}
	generalOpeners = []string{
		"Can I get your help with something?", "Things have been hectic this week.", "General question.",
		"Not about one kid in particular today.", "I need some help with planning.",
	}
	tails = []string{
		"{L} had a lot of homework too.", "School has been busy lately.", "I'm not sure I'm handling it right.",
		"Any ideas would help.", "I really need help with this.", "{L} was tired after school.",
		"Reading time went fine at least.", "I don't want it to turn into a fight.",
	}
	generalTails = []string{
		"Any ideas would help.", "I really need help with this.", "School has been busy lately.",
		"I'm not sure I'm handling it right.",
	}
	acks = []string{
		"That makes sense.", "Thanks for telling me.", "That sounds hard.", "Good to hear.", "I hear you.",
		"That's very common at this age.", "Thanks for the update.", "Let's think it through.",
	}
	followUps = []string{
		"How does {L} usually react when that happens?", "What time does homework usually start?",
		"Would it help to write this into the weekly plan?", "What has worked for {L} before?",
		"How is {L} sleeping lately?", "Does {teacher} see the same thing at school?",
	}
	remarks = []string{
		"Remember that every child develops at {pos} own pace, and {L} is no exception.",
		"Keep the routine simple and predictable so {L} knows what to expect.",
		"It also helps to talk with {teacher} so school and home send the same message.",
		"Praise the effort more than the result; that's what keeps kids trying.",
		"Try it for a week or two before deciding whether it works.",
		"Write down what you notice each day; patterns show up quickly.",
		"Take care of yourself too; everyone has less patience when they are tired.",
		"If it keeps happening, we can come back to it and adjust the plan.",
		"Kids often push back at first and then settle into new habits.",
		"Reading together, even for a few minutes, helps with almost everything at school.",
		"Homework, reading and sleep are connected, so a small change in one helps the others.",
		"You know {L} best, so adapt any of this to what feels right.",
	}
	generalRemarks = []string{
		"Try it for a week or two before deciding whether it works.",
		"Take care of yourself too; everyone has less patience when they are tired.",
		"Kids often push back at first and then settle into new habits.",
		"Keep the routine simple and predictable so everyone knows what to expect.",
		"Homework, reading and sleep are connected, so a small change in one helps the others.",
	}
	generalFollowUps = []string{
		"Would it help to write this into the weekly plan?", "What feels most urgent this week?",
		"Who else can share some of the load?",
	}
)

func openersFor(general bool) []string   { return choose(general, generalOpeners, openers) }
func tailsFor(general bool) []string     { return choose(general, generalTails, tails) }
func followUpsFor(general bool) []string { return choose(general, generalFollowUps, followUps) }

func choose(general bool, g, l []string) []string {
	if general {
		return g
	}
	return l
}
