package searchquality

// Facts are stated once, in one session; a question about one is labelled
// with that session. Each template gives the sentence that states the fact,
// the mentor's answer to it, an "about" phrase for the temporal and
// reminder frames (it keeps the keyword, as people asking "when did we talk
// about X" do), and hand-written questions that do not copy the statement:
// they reword it, swap a key word for a synonym, or lean on the learner's
// name. The slot values are drawn once per account and never reused in it,
// so the fact really is said once.

type ask struct{ kind, text string }

type slot struct {
	name string
	pool []string
	// free values (weekdays, small numbers) are not distinctive, so two
	// facts may share one; all others are drawn once per account.
	free bool
}

type factTemplate struct {
	id      string
	topic   string
	general bool   // about the family or class, posted to the general context
	who     string // "", "parent" or "teacher": whose account it fits
	age     string // "", "young" or "older": which learners it fits
	slots   []slot
	say     []string
	reply   []string
	about   string
	// follow are exchanges that go on about the fact, as real
	// conversations do, in the words a later question may use.
	follow [][2]string
	asks   []ask
}

func (t *factTemplate) fits(teacher bool) bool {
	if t.who == "parent" && teacher || t.who == "teacher" && !teacher {
		return false
	}
	return topics[t.topic].general == t.general
}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}

var factTemplates = []factTemplate{
	{
		id: "music-teacher", topic: "music", who: "parent",
		slots: []slot{{"tname", []string{"Mrs. Alvarez", "Mr. Brennan", "Ms. Kowalski", "Mrs. Nakamura", "Mr. Delgado", "Ms. Fitzgerald"}, false},
			{"lday", weekdays, true}},
		say: []string{
			"We finally found a {instrument} teacher for {L}: {tname}. Lessons are on {lday} after school.",
			"{L} started {instrument} lessons with {tname}, who comes to the house every {lday}.",
		},
		reply: []string{
			"That's great. Ask {tname} for a short weekly plan so {L} knows what to work on between lessons.",
			"A good teacher makes a big difference. {tname} can tell you what to listen for during practice.",
		},
		about: "{L}'s {instrument} teacher",
		follow: [][2]string{
			{"{L} already likes {tname}, so the music lessons feel less like a chore.", "Liking the teacher is half the battle; it keeps kids practicing between lessons."},
		},
		asks: []ask{
			{KindSynonym, "Who gives {L} music lessons?"},
			{KindParaphrase, "What's the name of the person teaching {L} {instrument}?"},
			{KindName, "Which day does {L} see {pos} {instrument} teacher?"},
		},
	},
	{
		id: "allergy", topic: "health",
		slots: []slot{{"allergen", []string{"peanuts", "tree nuts", "shellfish", "eggs", "sesame", "kiwi", "strawberries"}, false}},
		say: []string{
			"{L} is allergic to {allergen}; we found out after a reaction at a birthday party.",
			"The allergist confirmed {L} is allergic to {allergen}, so we read every label now.",
		},
		reply: []string{
			"Make sure the school nurse has an action plan and that {pos} EpiPen goes everywhere with {obj}.",
			"Share the allergy plan with {teacher} and the lunchroom staff, and keep an EpiPen in {pos} backpack.",
		},
		about: "{L}'s {allergen} allergy",
		follow: [][2]string{
			{"I'm nervous about parties and school lunches now.", "Pack safe treats for parties and talk to the lunchroom about a safe table."},
			{"{L} is handling it well, {sub} asks what's in food before eating.", "That's a great habit; asking about ingredients will keep {obj} safe for life."},
		},
		asks: []ask{
			{KindParaphrase, "What food does {L} have to stay away from?"},
			{KindSynonym, "Does {L} have any food allergies?"},
			{KindName, "What can't {L} eat at parties?"},
		},
	},
	{
		id: "bedtime-moved", topic: "sleep", who: "parent",
		slots: []slot{{"btime", []string{"8:15", "7:45", "8:30", "7:30"}, false},
			{"reason", []string{"swim practice", "early hockey practice", "the new school start time", "the 6 am gymnastics class", "the early bus"}, false}},
		say: []string{
			"We moved {L}'s bedtime to {btime} because of {reason}.",
			"Because of {reason}, {L}'s bedtime is {btime} now.",
		},
		reply: []string{
			"Moving bedtime for {reason} is wise; keep the wind-down routine the same so only the clock changes.",
			"That makes sense with {reason}. Shift it in fifteen-minute steps if {sub} resists.",
		},
		about: "{L}'s earlier bedtime",
		follow: [][2]string{
			{"{L} grumbled about going to bed earlier but fell asleep fast.", "Tired kids fall asleep quickly; the earlier lights out will pay off."},
		},
		asks: []ask{
			{KindParaphrase, "Why does {L} go to sleep earlier now?"},
			{KindSynonym, "What time is lights out for {L} these days?"},
			{KindName, "What did we change about {L}'s evenings?"},
		},
	},
	{
		id: "best-friend", topic: "friends",
		slots: []slot{{"bf", []string{"Priyanka", "Xavier", "Leilani", "Ezekiel", "Marguerite", "Soren", "Beatrix", "Ignacio"}, false}},
		say: []string{
			"{L}'s best friend is {bf}; they do everything together at recess.",
			"{L} and {bf} have become best friends, they even sit together on the bus.",
		},
		reply: []string{
			"It's lovely that {L} has {bf}. A close friend makes school feel much safer.",
			"A best friend like {bf} is a real anchor at this age.",
		},
		about: "{L}'s best friend",
		follow: [][2]string{
			{"They want to hang out every weekend now.", "Playdates with a close buddy are great for confidence, just keep some family time too."},
		},
		asks: []ask{
			{KindSynonym, "Who is {L}'s closest buddy?"},
			{KindParaphrase, "Which kid does {L} hang out with the most?"},
		},
	},
	{
		id: "tutor", topic: "math", who: "parent",
		slots: []slot{{"tutor", []string{"Daniel Moreau", "Keisha Abernathy", "Rafael Castellano", "Greta Szabo", "Miles Whitfield"}, false},
			{"tday", weekdays, true}},
		say: []string{
			"We hired a tutor for {L}, {tutor}, who comes {tday} evenings for math.",
			"{tutor} is going to tutor {L} in math every {tday}.",
		},
		reply: []string{
			"A tutor can take pressure off homework time. Ask {tutor} to send a short note after each session.",
			"Good idea. Share {teacher}'s notes with {tutor} so they work on the same skills.",
		},
		about: "the math tutor for {L}",
		follow: [][2]string{
			{"The extra help after school seems to be working already.", "Great. Keep the tutoring sessions short and positive, especially at the start."},
		},
		asks: []ask{
			{KindParaphrase, "Who did we get to help {L} with math outside school?"},
			{KindSynonym, "Who coaches {L} in arithmetic at home?"},
			{KindName, "What evening does {L} have extra math help?"},
		},
	},
	{
		id: "book-series", topic: "reading",
		slots: []slot{{"series", []string{"Wings of Fire", "Percy Jackson", "Harry Potter", "The Wild Robot", "Warriors", "Bad Guys", "Dragon Masters"}, false}},
		say: []string{
			"{L} is obsessed with the {series} books; {sub} has read the whole series twice.",
			"All {L} wants to read right now is {series}, one book after another.",
		},
		reply: []string{
			"When a child loves a series like {series}, look for similar authors to keep the momentum.",
			"Series like {series} are great for stamina. Let the librarian suggest what comes next.",
		},
		about: "{L} and the {series} books",
		follow: [][2]string{
			{"{L} even rereads the books at breakfast.", "Rereading favorite novels is how kids build reading stamina; don't worry about it."},
		},
		asks: []ask{
			{KindParaphrase, "What books is {L} hooked on?"},
			{KindSynonym, "Which novels does {L} keep rereading?"},
			{KindName, "What does {L} like to read these days?"},
		},
	},
	{
		id: "new-pet", topic: "family", general: true, who: "parent",
		slots: []slot{{"newpet", []string{"kitten", "rabbit", "guinea pig", "beagle puppy", "parakeet", "tortoise"}, false},
			{"newpetname", []string{"Clementine", "Rocket", "Marbles", "Noodle", "Sprout", "Pickle"}, false}},
		say: []string{
			"We adopted a {newpet} named {newpetname} from the shelter last weekend.",
			"Big news: we brought home a {newpet} from the animal shelter and the kids named it {newpetname}.",
		},
		reply: []string{
			"A new {newpet} is a great chance to give {kids} a real responsibility.",
			"Congratulations! {newpetname} can be part of the chore chart.",
		},
		about: "adopting {newpetname}",
		follow: [][2]string{
			{"The kids are already fighting over who gets to feed the new pet.", "Make a feeding schedule; pets are a great first responsibility."},
		},
		asks: []ask{
			{KindParaphrase, "What did we name the animal we got from the shelter?"},
			{KindSynonym, "What's our new pet called?"},
		},
	},
	{
		id: "glasses", topic: "health",
		slots: []slot{{"eyecond", []string{"is nearsighted", "is farsighted", "has astigmatism in one eye"}, false},
			{"optom", []string{"Dr. Lindgren", "Dr. Mahmoud", "Dr. Costa", "Dr. Whitaker"}, false}},
		say: []string{
			"The eye exam showed {L} {eyecond}, so {sub} gets glasses next week from {optom}.",
			"{optom} checked {L}'s eyes: {sub} {eyecond} and needs glasses.",
		},
		reply: []string{
			"That may explain the trouble copying from the board. Let {teacher} know so {L} can sit near the front.",
			"Glasses can change a lot for schoolwork. Let {obj} pick the frames so {sub} actually wears them.",
		},
		about: "{L}'s new glasses",
		follow: [][2]string{
			{"I had no idea {sub} couldn't see the board well.", "Vision problems are easy to miss in kids; {L} probably thought everyone saw that way."},
		},
		asks: []ask{
			{KindSynonym, "Did we find out anything about {L}'s vision?"},
			{KindParaphrase, "What did the eye doctor say about {L}?"},
			{KindName, "Why is {L} getting glasses?"},
		},
	},
	{
		id: "504-meeting", topic: "school",
		slots: []slot{{"mdate", []string{"March 14", "October 3", "November 18", "February 27", "April 9"}, false},
			{"coord", []string{"Mrs. Haddad", "Mr. Takahashi", "Ms. Rinaldi", "Mrs. Gallagher"}, false}},
		say: []string{
			"The 504 plan meeting for {L} is on {mdate} with {coord}, the school counselor.",
			"{coord} set up {L}'s 504 meeting for {mdate}.",
		},
		reply: []string{
			"Bring a list of the accommodations you want to request, like extra time on tests and a quiet testing space.",
			"Write down what helps {L} most, such as breaks and extra time, before meeting with {coord}.",
		},
		about: "{L}'s 504 meeting",
		follow: [][2]string{
			{"I want the support plan to include extra time on tests.", "That's a common accommodation and very reasonable to ask for."},
		},
		asks: []ask{
			{KindParaphrase, "When is the meeting about {L}'s accommodations?"},
			{KindSynonym, "Who is the counselor handling {L}'s support plan?"},
		},
	},
	{
		id: "team", topic: "sports",
		slots: []slot{{"team", []string{"Hornets", "Rockets", "Blue Jays", "Thunder", "Sharks", "Comets"}, false}},
		say: []string{
			"{L} made the {team} travel {sport} team! Practices are two nights a week.",
			"{L} got picked for the {team}, the travel {sport} team.",
		},
		reply: []string{
			"Congratulations to {L}! Travel teams are a big commitment, so plan homework around those nights.",
			"What an achievement. Talk with {obj} about balancing the travel games with school.",
		},
		about: "{L} making the travel team",
		follow: [][2]string{
			{"It means games most weekends, but {L} is thrilled to be on the team.", "Being picked for a team is a big confidence boost; celebrate it."},
		},
		asks: []ask{
			{KindParaphrase, "What's the name of the club team {L} got picked for?"},
			{KindName, "Which team is {L} on now?"},
			{KindSynonym, "What {sport} squad did {L} join?"},
		},
	},
	{
		id: "camp", topic: "planning", general: true, who: "parent",
		slots: []slot{{"camp", []string{"Camp Wildwood", "Camp Tall Pines", "Lakeview Day Camp", "Camp Kinnick", "Camp Arrowhead"}, false},
			{"cmonth", []string{"June", "July", "August"}, false}},
		say: []string{
			"We signed {kids} up for {camp} for two weeks in {cmonth}.",
			"{kids} are going to {camp} in {cmonth}, two weeks of day camp.",
		},
		reply: []string{
			"Two weeks is a nice length. Visit beforehand if you can so nobody is surprised on day one.",
			"That will give the summer some structure. Label everything; camps eat water bottles.",
		},
		about: "the summer camp",
		follow: [][2]string{
			{"The kids are excited but a little nervous about the summer program.", "Visiting the camp beforehand usually settles the nerves."},
		},
		asks: []ask{
			{KindParaphrase, "Where are the kids going this summer?"},
			{KindSynonym, "Which summer program did we register for?"},
		},
	},
	{
		id: "sticker-chart", topic: "emotions",
		slots: []slot{{"reward", []string{"a trip to the roller rink", "picking the Friday movie", "a new Lego set", "pancakes for dinner", "an extra recess game"}, false},
			{"nstick", []string{"ten", "fifteen", "twenty"}, true}},
		say: []string{
			"We set up a sticker chart for {L}: {nstick} stickers earns {reward}.",
			"{L} is working toward {reward}; it takes {nstick} stickers on the chart.",
		},
		reply: []string{
			"Keep the stickers tied to specific behaviors, and deliver the reward quickly so it feels real.",
			"Charts work best when the goal is reachable within a week or two.",
		},
		about: "{L}'s sticker chart",
		follow: [][2]string{
			{"{L} checks the reward chart every morning.", "That's the point; seeing progress is what keeps the motivation going."},
		},
		asks: []ask{
			{KindSynonym, "What does {L} get when the reward chart is full?"},
			{KindParaphrase, "What's the prize for {L} collecting enough stickers?"},
		},
	},
	{
		id: "screen-rule", topic: "screens", who: "parent",
		slots: []slot{{"scut", []string{"7 pm", "7:30", "6:30 pm", "8 pm"}, false},
			{"smin", []string{"thirty", "forty-five", "sixty"}, true}},
		say: []string{
			"New rule for {L}: no tablet after {scut}, and only {smin} minutes on school nights.",
			"We agreed {L} gets {smin} minutes of tablet on school nights and it goes off at {scut}.",
		},
		reply: []string{
			"Clear limits like that are easier to enforce. Use a timer so the device, not you, ends the session.",
			"Write the tablet rule on the fridge so there's nothing to argue about.",
		},
		about: "{L}'s tablet limits",
		follow: [][2]string{
			{"{L} complained about the iPad limit for two days and then accepted it.", "Two days of protest is normal; staying consistent is what makes the rule stick."},
		},
		asks: []ask{
			{KindSynonym, "How long can {L} use the iPad on weeknights?"},
			{KindParaphrase, "What time do devices get turned off for {L}?"},
		},
	},
	{
		id: "grandparent-pickup", topic: "planning", general: true, who: "parent",
		slots: []slot{{"gname", []string{"Grandma Rose", "Grandpa Joe", "Nana Bea", "Abuela Carmen", "Oma Hilde"}, false},
			{"gday", weekdays, true}},
		say: []string{
			"{gname} picks {kids} up from school every {gday} now.",
			"Starting this month {gname} does the {gday} school pickup.",
		},
		reply: []string{
			"That's a big help. Share the homework routine with {gname} so afternoons stay consistent.",
			"Lovely. Grandparent afternoons can be a calm spot in the week.",
		},
		about: "school pickup on {gday}",
		follow: [][2]string{
			{"The kids love that afternoon with their grandparent.", "Grandparent time is precious; it also gives you a breather."},
		},
		asks: []ask{
			{KindParaphrase, "Who collects the kids after class on {gday}?"},
			{KindName, "Which grandparent helps out with picking up?"},
		},
	},
	{
		id: "lunch-food", topic: "health",
		slots: []slot{{"lfood", []string{"cheese quesadillas", "buttered noodles", "cucumber sushi rolls", "plain bagels", "turkey wraps"}, false}},
		say: []string{
			"The only lunch {L} reliably eats is {lfood}; everything else comes home untouched.",
			"{L} will eat {lfood} at lunch and nothing else, every day.",
		},
		reply: []string{
			"That's very common. Pack it with one small new item on the side and don't make it a fight.",
			"Fine for now; add a fruit next to it and let {obj} choose which one.",
		},
		about: "what {L} eats for lunch",
		follow: [][2]string{
			{"I worry the lunchbox is the same every single day.", "Kids often eat the same lunch for months; it's fine as long as they eat."},
		},
		asks: []ask{
			{KindParaphrase, "What's the one food {L} will actually eat at school?"},
			{KindSynonym, "What does {L} like in {pos} lunchbox?"},
		},
	},
	{
		id: "fear", topic: "emotions",
		slots: []slot{{"fearthing", []string{"thunderstorms", "the dark", "dogs", "escalators", "balloons popping", "fire drills"}, false}},
		say: []string{
			"{L} has become terrified of {fearthing}; {sub} panics whenever it comes up.",
			"Lately {L} is really afraid of {fearthing}.",
		},
		reply: []string{
			"Fears like that are common. Read a picture book about it together and talk about what actually happens.",
			"Take it in small steps and let {obj} feel in control; don't force it.",
		},
		about: "{L}'s fear of {fearthing}",
		follow: [][2]string{
			{"{L} gets scared and won't leave my side.", "Staying close is okay at first; then let {obj} take small brave steps."},
		},
		asks: []ask{
			{KindSynonym, "What is {L} scared of?"},
			{KindParaphrase, "What's been making {L} panic lately?"},
		},
	},
	{
		id: "birthday-party", topic: "planning", general: true, who: "parent",
		slots: []slot{{"venue", []string{"the roller rink", "the climbing gym", "the bowling alley", "the science museum", "the trampoline park"}, false},
			{"pdate", []string{"the 12th", "Saturday the 9th", "the 21st"}, false}},
		say: []string{
			"The birthday party will be at {venue} on {pdate}; we're inviting the whole class.",
		},
		reply: []string{
			"Inviting the whole class avoids hurt feelings. Send invitations through school a couple of weeks ahead.",
		},
		about: "the birthday party plans",
		follow: [][2]string{
			{"{kids} are counting down the days to the party.", "Let them help with the decorations; it makes the wait easier."},
		},
		asks: []ask{
			{KindParaphrase, "Where are we celebrating the birthday?"},
			{KindSynonym, "What venue did we book for the party?"},
		},
	},
	{
		id: "spelling-quiz", topic: "writing",
		slots: []slot{{"sday", weekdays, true}, {"nwords", []string{"twelve", "fifteen", "twenty"}, true}},
		say: []string{
			"{L}'s spelling tests are every {sday}, with {nwords} new words each week.",
			"Every {sday} {L} has a spelling test on {nwords} words.",
		},
		reply: []string{
			"Practice a few words each night rather than all of them the night before the test.",
			"Split the list across the week and quiz {obj} in the car.",
		},
		about: "{L}'s weekly spelling list",
		follow: [][2]string{
			{"{L} got a perfect score on the last quiz!", "Celebrate it. Short daily practice clearly works for {obj}."},
		},
		asks: []ask{
			{KindSynonym, "What day is {L}'s spelling quiz?"},
			{KindParaphrase, "How many words does {L} have to learn every week?"},
		},
	},
	{
		id: "carpool", topic: "planning", general: true, who: "parent",
		slots: []slot{{"cfamily", []string{"Hendersons", "Patels", "Nguyens", "Okonkwos", "Garcias", "Larsens"}, false},
			{"cdays", []string{"Mondays and Wednesdays", "Tuesdays and Thursdays", "Wednesdays and Fridays"}, false}},
		say: []string{
			"We carpool with the {cfamily} on {cdays}; I drive mornings and they do afternoons.",
		},
		reply: []string{
			"Write the carpool plan on the family calendar so {kids} know who is picking them up.",
		},
		about: "the carpool with the {cfamily}",
		follow: [][2]string{
			{"Sharing rides saves me so much time.", "A carpool also gives the kids time with friends before and after school."},
		},
		asks: []ask{
			{KindSynonym, "Which family do we share school rides with?"},
			{KindParaphrase, "Who drives the kids home on {cdays}?"},
		},
	},
	{
		id: "allowance", topic: "chores", who: "parent",
		slots: []slot{{"amount", []string{"$5", "$3", "$7", "$10"}, true},
			{"achore", []string{"feeding {petname}", "emptying the dishwasher", "folding towels", "taking out the recycling"}, false}},
		say: []string{
			"{L} gets an allowance of {amount} a week for {achore} and keeping {pos} room tidy.",
			"We started an allowance: {L} earns {amount} a week for {achore}.",
		},
		reply: []string{
			"Linking allowance to a few clear jobs teaches responsibility. Let {obj} save part of it in a jar.",
			"Good plan. Three jars, spend, save and give, make the money concrete.",
		},
		about: "{L}'s allowance",
		follow: [][2]string{
			{"{L} is already saving {pos} pocket money for a toy.", "Saving toward something specific teaches patience with money."},
		},
		asks: []ask{
			{KindSynonym, "How much pocket money does {L} get?"},
			{KindParaphrase, "What job does {L} get paid for?"},
		},
	},
	{
		id: "coach", topic: "sports",
		slots: []slot{{"coach", []string{"Coach Ramirez", "Coach Dietrich", "Coach Mbeki", "Coach Harlow", "Coach Jablonski"}, false}},
		say: []string{
			"{L}'s {sport} coach, {coach}, wants {obj} to work on footwork at home.",
			"{coach} told me {L} should practice footwork for {sport} at home.",
		},
		reply: []string{
			"{coach} sounds invested. Ten minutes in the yard a few times a week is plenty.",
			"That's specific feedback; make it a game so it doesn't feel like extra homework.",
		},
		about: "{L}'s coach",
		follow: [][2]string{
			{"{L} looks up to the coach a lot.", "A coach kids respect can be a great ally for building good habits."},
		},
		asks: []ask{
			{KindParaphrase, "Who is in charge of {L}'s {sport} team?"},
			{KindName, "What does {L}'s trainer want {obj} to practice?"},
		},
	},
	{
		id: "speech", topic: "school",
		slots: []slot{{"sound", []string{"r", "s", "th", "l"}, true},
			{"therapist", []string{"Ms. Osei", "Miss Quinlan", "Mrs. Eriksen", "Mr. Baptiste"}, false}},
		say: []string{
			"{L} started speech therapy with {therapist} to work on {pos} '{sound}' sound.",
		},
		reply: []string{
			"Speech practice works best in short daily bursts. Ask {therapist} for a few words to practice in the car.",
		},
		about: "{L}'s speech therapy",
		follow: [][2]string{
			{"{pos} pronunciation is getting clearer already.", "Short practice in the car with the speech exercises really pays off."},
		},
		asks: []ask{
			{KindParaphrase, "Who is helping {L} with pronunciation?"},
			{KindSynonym, "What is {L} working on with the speech teacher?"},
		},
	},
	{
		id: "science-fair", topic: "science",
		slots: []slot{{"sproj", []string{"how salt affects ice melting", "which paper towel absorbs the most water",
			"growing beans under colored light", "which ball bounces highest", "how fast bread molds"}, false}},
		say: []string{
			"For the science fair {L} is testing {sproj}.",
			"{L}'s science fair project is going to be about {sproj}.",
		},
		reply: []string{
			"That's a great question to test. Help {obj} write the hypothesis before starting the experiment.",
			"Have {obj} keep a log with dates and photos; judges love that.",
		},
		about: "{L}'s project for the science fair",
		follow: [][2]string{
			{"{L} wants to make a big poster for the experiment.", "A poster with a clear question, method and result is exactly what judges look for."},
		},
		asks: []ask{
			{KindParaphrase, "What experiment did {L} pick for the fair?"},
			{KindSynonym, "What's {L}'s STEM project about?"},
		},
	},
	{
		id: "substitute", topic: "school", who: "parent",
		slots: []slot{{"subname", []string{"Mr. Greenberg", "Ms. Achebe", "Mrs. Novak", "Mr. Pellegrino"}, false},
			{"submonth", []string{"December", "spring break", "March"}, false}},
		say: []string{
			"{teacher} is on leave, and {L}'s long-term sub is {subname} until {submonth}.",
		},
		reply: []string{
			"Changes in teacher can unsettle kids. Ask {subname} for a short intro note you can read with {L}.",
		},
		about: "the sub covering for {teacher}",
		follow: [][2]string{
			{"{L} misses {teacher} and says the replacement is strict.", "Changes in the classroom take time; ask {L} about one good thing each day."},
		},
		asks: []ask{
			{KindSynonym, "Who is filling in for {L}'s teacher?"},
			{KindParaphrase, "How long is {L}'s class covered by a replacement?"},
		},
	},
	{
		id: "lost-item", topic: "homework",
		slots: []slot{{"item", []string{"retainer", "lunchbox", "winter coat", "recorder", "calculator"}, false}},
		say: []string{
			"{L} left {pos} {item} on the school bus again, the third time this month.",
		},
		reply: []string{
			"A checklist by the door and a label with your phone number could save some trips.",
		},
		about: "{L}'s lost {item}",
		follow: [][2]string{
			{"I'm tired of calling the bus company.", "Labels and a quick checklist at the door should cut down on lost things."},
		},
		asks: []ask{
			{KindParaphrase, "What did {L} forget on the bus?"},
			{KindName, "What keeps going missing with {L}?"},
		},
	},
	{
		id: "medication", topic: "health",
		slots: []slot{{"med", []string{"melatonin at bedtime", "an inhaler before gym class", "a daily allergy pill with breakfast", "iron drops with orange juice"}, false}},
		say: []string{
			"The pediatrician started {L} on {med}.",
		},
		reply: []string{
			"Let the school office know so they have it on file, and keep a simple log for the next checkup.",
		},
		about: "{L}'s new medicine from the pediatrician",
		follow: [][2]string{
			{"{L} takes it without a fuss so far.", "Good. Note any side effects for the next visit to the doctor."},
		},
		asks: []ask{
			{KindSynonym, "What did the doctor prescribe for {L}?"},
			{KindParaphrase, "Is {L} taking anything new every day?"},
		},
	},
	{
		id: "moving", topic: "planning", general: true, who: "parent",
		slots: []slot{{"town", []string{"Portland", "Boulder", "Raleigh", "Madison", "Tucson", "Halifax"}, false},
			{"mmonth", []string{"June", "August", "January"}, false}},
		say: []string{
			"We're moving to {town} in {mmonth}, so {kids} will start at a new school.",
		},
		reply: []string{
			"Moves are easier when kids can see the new school and neighborhood ahead of time. Start talking about it now.",
		},
		about: "the move to {town}",
		follow: [][2]string{
			{"{kids} are sad about leaving their friends.", "Let them say proper goodbyes and plan a video call with friends after the move."},
		},
		asks: []ask{
			{KindSynonym, "Where are we relocating?"},
			{KindParaphrase, "Which city is the family heading to?"},
		},
	},
	{
		id: "vacation", topic: "planning", general: true, who: "parent",
		slots: []slot{{"dest", []string{"the Outer Banks", "Yellowstone", "a cabin in Maine", "the Grand Canyon", "Quebec City"}, false},
			{"brk", []string{"spring break", "winter break", "Thanksgiving week"}, false}},
		say: []string{
			"We're taking {kids} to {dest} over {brk}.",
		},
		reply: []string{
			"Bring a travel journal; a line a day keeps some writing going over the break.",
		},
		about: "the trip over {brk}",
		follow: [][2]string{
			{"{kids} are already planning what to pack for the holiday.", "A packing list they write themselves is a sneaky writing exercise."},
		},
		asks: []ask{
			{KindParaphrase, "Where are we going on holiday?"},
			{KindName, "What's the plan for {brk}?"},
		},
	},
	{
		id: "library-day", topic: "reading", who: "parent",
		slots: []slot{{"libday", weekdays, true}},
		say: []string{
			"Library day for {L}'s class is {libday}, and {sub} keeps forgetting to return the book.",
		},
		reply: []string{
			"Put the library book in {pos} backpack the night before as part of the routine.",
		},
		about: "{L}'s library day",
		follow: [][2]string{
			{"{L} had to pay a late fee last month.", "A spot by the door for library books helps them make it back."},
		},
		asks: []ask{
			{KindParaphrase, "Which day does {L} need to bring back library books?"},
			{KindName, "When does {L} have to take books back to school?"},
		},
	},
	{
		id: "tooth", topic: "health", who: "parent", age: "young",
		slots: []slot{{"tfmoney", []string{"a gold dollar", "five dollars", "two quarters and a note"}, false}},
		say: []string{
			"{L} lost {pos} first tooth at dinner and the tooth fairy left {tfmoney}.",
		},
		reply: []string{
			"What a milestone! Some families keep the tooth fairy's note as a keepsake.",
		},
		about: "{L}'s first lost tooth",
		follow: [][2]string{
			{"{L} put the tooth under the pillow with a note.", "That's adorable; those are the memories that stick."},
		},
		asks: []ask{
			{KindParaphrase, "How much did the tooth fairy bring {L}?"},
			{KindName, "What happened with {L}'s tooth?"},
		},
	},
	{
		id: "bully", topic: "friends",
		slots: []slot{{"bully", []string{"Tyler", "Brandon", "Jace", "Kendall", "Colton", "Maddox"}, false}},
		say: []string{
			"A boy named {bully} keeps taking {L}'s snack at recess and laughing about it.",
		},
		reply: []string{
			"That's worth reporting in writing. Help {L} practice a firm stop and walking over to a recess aide.",
		},
		about: "the kid taking {L}'s snack",
		follow: [][2]string{
			{"{L} doesn't want me to call the school about it.", "That's a common worry. Tell {obj} that adults handle picking on others quietly and safely."},
		},
		asks: []ask{
			{KindSynonym, "Who has been picking on {L}?"},
			{KindParaphrase, "Is someone bullying {L} at recess?"},
		},
	},
	{
		id: "stuffed-animal", topic: "sleep", who: "parent",
		slots: []slot{{"plush", []string{"elephant", "bunny", "penguin", "sloth", "dinosaur"}, false},
			{"toyname", []string{"Mr. Wiggles", "Captain Fluff", "Peanut", "Bubbles", "Sir Hops"}, false}},
		say: []string{
			"{L} still can't sleep without {pos} stuffed {plush}, {toyname}.",
		},
		reply: []string{
			"That's completely normal; a comfort object helps with the transition to sleep.",
		},
		about: "{toyname} the {plush}",
		follow: [][2]string{
			{"{L} takes the stuffed animal to sleepovers too.", "A cuddly friend from home makes sleepovers much easier."},
		},
		asks: []ask{
			{KindParaphrase, "What's the name of the toy {L} sleeps with?"},
			{KindSynonym, "What is {L}'s cuddly animal called?"},
		},
	},
	{
		id: "app", topic: "math",
		slots: []slot{{"app", []string{"Prodigy", "Khan Academy", "Reflex Math", "Zearn", "Boddle"}, false},
			{"appmin", []string{"fifteen", "twenty", "ten"}, true}},
		say: []string{
			"We use {app} for {L}'s math practice, about {appmin} minutes a day.",
		},
		reply: []string{
			"Programs like that are best as a supplement; keep the minutes steady rather than long.",
		},
		about: "using {app}",
		follow: [][2]string{
			{"{L} likes the game parts of the program.", "Game-style practice is motivating; check the progress report once a week."},
		},
		asks: []ask{
			{KindParaphrase, "Which program does {L} use on the computer for math?"},
			{KindName, "What app did we pick for {L}?"},
		},
	},
	{
		id: "occupational-therapist", topic: "writing",
		slots: []slot{{"exercise", []string{"playdough squeezes", "tweezer games", "writing on a vertical whiteboard", "lacing beads"}, false}},
		say: []string{
			"The occupational therapist recommended a pencil grip and {exercise} for {L}'s handwriting.",
		},
		reply: []string{
			"Those build hand strength. Five minutes a day before homework is enough.",
		},
		about: "the occupational therapist's suggestions",
		follow: [][2]string{
			{"{L}'s writing is already a little neater.", "Fine motor work pays off slowly but steadily; keep the exercises fun."},
		},
		asks: []ask{
			{KindSynonym, "What did the OT suggest for {L}'s penmanship?"},
			{KindParaphrase, "What exercises help {L}'s fine motor skills?"},
		},
	},
	{
		id: "reading-minutes", topic: "reading", who: "parent",
		slots: []slot{{"rmin", []string{"20", "25", "30"}, true}},
		say: []string{
			"{teacher} wants {rmin} minutes of reading every night, signed in the reading log.",
		},
		reply: []string{
			"Split it into two shorter reads if {rmin} minutes in one go is too much.",
		},
		about: "the nightly reading requirement",
		follow: [][2]string{
			{"{L} complains that reading every evening is too long.", "Let {obj} read anything, comics count, as long as the minutes add up."},
		},
		asks: []ask{
			{KindParaphrase, "How long is {L} supposed to read each evening?"},
			{KindName, "How much reading does {L}'s teacher expect?"},
		},
	},
	{
		id: "swim-level", topic: "sports", who: "parent",
		slots: []slot{{"slevel", []string{"3", "4", "5"}, true},
			{"skill", []string{"swim freestyle across the pool", "tread water for a full minute", "dive off the side"}, false}},
		say: []string{
			"{L} passed level {slevel} in swim lessons and can now {skill}.",
		},
		reply: []string{
			"That's a real accomplishment. Celebrate it, then let {obj} pick the next goal.",
		},
		about: "{L}'s swim lessons",
		follow: [][2]string{
			{"{L} loves being in the water now.", "Confidence in the pool grows fast once the basics click."},
		},
		asks: []ask{
			{KindParaphrase, "What level did {L} reach at the pool?"},
			{KindSynonym, "What can {L} do in the water now?"},
		},
	},
	{
		id: "sibling-fight", topic: "family", general: true, who: "parent",
		slots: []slot{{"contested", []string{"the front seat", "the last waffle", "the bathroom mirror", "the TV remote"}, false}},
		say: []string{
			"{L1} and {L2} fight over {contested} every single morning.",
		},
		reply: []string{
			"Make a simple rotation, odd days and even days; it ends most of these fights.",
		},
		about: "the morning fights over {contested}",
		follow: [][2]string{
			{"The arguing makes everyone late.", "A rotation takes the decision away from them, which ends most arguing."},
		},
		asks: []ask{
			{KindSynonym, "What do the kids argue about before school?"},
			{KindName, "Why do {L1} and {L2} squabble in the mornings?"},
		},
	},
	{
		id: "building", topic: "science",
		slots: []slot{{"build", []string{"a marble run", "a birdhouse", "a robot", "a cardboard castle"}, false},
			{"material", []string{"paper towel tubes", "scrap wood", "old motors", "shoeboxes"}, false}},
		say: []string{
			"{L} spent the weekend building {build} out of {material}.",
		},
		reply: []string{
			"That kind of project builds planning skills; ask {obj} to explain how it works.",
		},
		about: "{L}'s weekend building project",
		follow: [][2]string{
			{"{L} wants to build another one next weekend.", "Keep a box of recycling handy for building projects."},
		},
		asks: []ask{
			{KindParaphrase, "What did {L} make over the weekend?"},
			{KindName, "What has {L} been constructing?"},
		},
	},
	{
		id: "test-grade", topic: "school",
		slots: []slot{{"tgrade", []string{"a B-plus", "an A-minus", "a C", "84 percent"}, false},
			{"tsub", []string{"fractions", "geography", "vocabulary", "spelling", "history"}, false}},
		say: []string{
			"{L} got {tgrade} on the {tsub} test, up from last time.",
		},
		reply: []string{
			"Improvement is the real headline. Ask {L} what {sub} did differently to prepare.",
		},
		about: "{L}'s {tsub} test score",
		follow: [][2]string{
			{"{L} studied much harder for this exam.", "Point out that the studying caused the better mark; that's the lesson to keep."},
		},
		asks: []ask{
			{KindSynonym, "How did {L} do on {pos} {tsub} exam?"},
			{KindParaphrase, "What mark did {L} get in {tsub}?"},
		},
	},
	{
		id: "field-trip", topic: "school", who: "parent",
		slots: []slot{{"ftplace", []string{"the aquarium", "the apple orchard", "the state capitol", "the planetarium", "the fire station"}, false},
			{"ftdate", []string{"the 15th", "Thursday the 8th", "May 2"}, false}},
		say: []string{
			"The class field trip to {ftplace} is on {ftdate}, and I signed up to chaperone.",
		},
		reply: []string{
			"Chaperoning is a nice way to see {L} with classmates. Pack extra snacks and a small first-aid kit.",
		},
		about: "the {ftplace} field trip",
		follow: [][2]string{
			{"{L} is excited that I'm coming along on the trip.", "Kids love seeing a parent on a class outing; enjoy it."},
		},
		asks: []ask{
			{KindParaphrase, "Am I going along on an outing with {L}'s class?"},
			{KindSynonym, "When is {L}'s class excursion?"},
		},
	},
	{
		id: "conference", topic: "school", who: "parent",
		slots: []slot{{"confsub", []string{"math", "science", "reading groups", "writing time"}, false},
			{"behav", []string{"talks a lot during", "daydreams in", "rushes through"}, false}},
		say: []string{
			"At the conference, {teacher} told me {L} {behav} {confsub} but is very kind to classmates.",
		},
		reply: []string{
			"That's balanced feedback. Pick one small goal for {confsub} and check in again in a month.",
		},
		about: "the parent-teacher conference",
		follow: [][2]string{
			{"Overall the meeting with {teacher} went well.", "Good. Share one piece of the feedback with {L}, the kind part first."},
		},
		asks: []ask{
			{KindParaphrase, "What did {teacher} say about {L} at our meeting?"},
			{KindName, "What feedback did we get about {L} in class?"},
		},
	},
	{
		id: "leave-time", topic: "planning", general: true, who: "parent",
		slots: []slot{{"ltime", []string{"7:10", "7:25", "7:40"}, false}, {"bus", []string{"bus 14", "bus 9", "bus 22"}, false}},
		say: []string{
			"We have to leave the house at {ltime} sharp to catch {bus}.",
		},
		reply: []string{
			"Work backwards from {ltime}: wake-up, breakfast, shoes by the door.",
		},
		about: "what time we leave in the morning",
		follow: [][2]string{
			{"We're always rushing out the door.", "A morning checklist by the door takes the rush out."},
		},
		asks: []ask{
			{KindParaphrase, "What time do we need to be out the door on school days?"},
			{KindSynonym, "When does the school bus come?"},
		},
	},
	{
		id: "babysitter", topic: "planning", general: true, who: "parent",
		slots: []slot{{"sitter", []string{"Tessa", "Marisol", "Bryn", "Anika", "Delphine"}, false}, {"sitday", weekdays, true}},
		say: []string{
			"Our sitter {sitter} watches {kids} on {sitday} evenings while I'm at work.",
		},
		reply: []string{
			"Leave {sitter} a short note about homework and bedtime so evenings run the same.",
		},
		about: "our sitter",
		follow: [][2]string{
			{"{kids} adore the sitter.", "A sitter the kids love makes your work nights much easier."},
		},
		asks: []ask{
			{KindSynonym, "Who looks after the kids on {sitday} nights?"},
			{KindParaphrase, "What's the name of the person who minds the kids when I work late?"},
		},
	},
	{
		id: "braces", topic: "health", who: "parent", age: "older",
		slots: []slot{{"ortho", []string{"Dr. Feldman", "Dr. Yamamoto", "Dr. Ashworth", "Dr. Benedetti"}, false},
			{"bdate", []string{"the 3rd", "March 20", "Tuesday the 14th"}, false}},
		say: []string{
			"{L} gets braces on {bdate} at {ortho}'s office.",
		},
		reply: []string{
			"The first few days can be sore; stock up on soft foods like yogurt and soup.",
		},
		about: "{L}'s braces",
		follow: [][2]string{
			{"{L} is nervous about the orthodontist.", "Most kids find the appointment easier than they feared."},
		},
		asks: []ask{
			{KindSynonym, "When is {L}'s orthodontist appointment?"},
			{KindParaphrase, "Who is fixing {L}'s teeth?"},
		},
	},
	{
		id: "language-school", topic: "school",
		slots: []slot{{"lang", []string{"Spanish", "Mandarin", "Korean", "Polish", "Arabic", "Hindi"}, false}},
		say: []string{
			"{L} goes to {lang} school on Saturday mornings at the community center.",
		},
		reply: []string{
			"Weekend language school is a big gift. Let {obj} teach the family a word or two at dinner.",
		},
		about: "{L}'s {lang} classes",
		follow: [][2]string{
			{"{L} sometimes complains about weekend classes.", "Meeting friends at weekend language classes usually helps motivation."},
		},
		asks: []ask{
			{KindSynonym, "What language does {L} study on weekends?"},
			{KindParaphrase, "Where does {L} go every Saturday?"},
		},
	},
	{
		id: "club", topic: "friends",
		slots: []slot{{"club", []string{"chess", "robotics", "garden", "origami", "newspaper"}, false}, {"clubday", weekdays, true}},
		say: []string{
			"{L} joined the {club} club; it meets {clubday} during lunch.",
		},
		reply: []string{
			"Clubs are a great way to meet kids with the same interests.",
		},
		about: "{L}'s {club} club",
		follow: [][2]string{
			{"{L} made two new friends at the club already.", "Clubs are one of the easiest ways to find friends with the same interests."},
		},
		asks: []ask{
			{KindParaphrase, "What group did {L} sign up for at school?"},
			{KindName, "What does {L} do at lunch on {clubday}?"},
		},
	},
	{
		id: "goal", topic: "school",
		slots: []slot{{"goal", []string{"read chapter books on {pos} own", "know all the times tables", "write a full page without help", "finish homework without reminders"}, false},
			{"gmonth", []string{"winter break", "June", "spring"}, false}},
		say: []string{
			"My goal is for {L} to {goal} by {gmonth}.",
		},
		reply: []string{
			"That's a clear goal. Break it into small steps and celebrate each one.",
		},
		about: "{L}'s goal for {gmonth}",
		follow: [][2]string{
			{"I want to track progress toward that goal.", "A simple chart on the fridge makes progress visible to {L}."},
		},
		asks: []ask{
			{KindParaphrase, "What target did we set for {L} this term?"},
			{KindName, "What are we hoping {L} can do by {gmonth}?"},
		},
	},
	{
		id: "cavities", topic: "health", who: "parent",
		slots: []slot{{"sweet", []string{"fruit snacks", "juice boxes", "gummy vitamins", "chocolate milk"}, false}},
		say: []string{
			"{L} has two cavities, and the dentist said to cut back on {sweet}.",
		},
		reply: []string{
			"Water between meals and brushing together at night will help.",
		},
		about: "{L}'s cavities",
		follow: [][2]string{
			{"{L} was upset about the fillings.", "Brushing together at night makes it a routine instead of a fight."},
		},
		asks: []ask{
			{KindParaphrase, "What did the dentist tell us to stop giving {L}?"},
			{KindSynonym, "Why does {L} have tooth decay?"},
		},
	},
	{
		id: "volunteer", topic: "school", who: "parent",
		slots: []slot{{"vday", weekdays, true}},
		say: []string{
			"I volunteer in {L}'s classroom every other {vday} for reading groups.",
		},
		reply: []string{
			"That's a great way to see what {L}'s class is working on.",
		},
		about: "volunteering in {L}'s classroom",
		follow: [][2]string{
			{"Helping out in the class lets me see how {L} works with other kids.", "That's a rare window into {pos} school day; enjoy it."},
		},
		asks: []ask{
			{KindParaphrase, "How often do I help out in {L}'s class?"},
			{KindSynonym, "Which day am I a helper at {L}'s school?"},
		},
	},
	{
		id: "class-pet", topic: "classroom", general: true, who: "teacher",
		slots: []slot{{"classpet", []string{"bearded dragon", "hermit crab", "guinea pig", "goldfish"}, false},
			{"classpetname", []string{"Sparky", "Professor Pebbles", "Nacho", "Bubbles"}, false}},
		say: []string{
			"Our class pet is a {classpet} named {classpetname}, and a different student feeds it each week.",
		},
		reply: []string{
			"A class pet is a great way to teach responsibility; a job chart keeps it fair.",
		},
		about: "the class pet",
		follow: [][2]string{
			{"The students fight over who gets to feed the pet.", "A job chart for the pet keeps it fair and teaches turn-taking."},
		},
		asks: []ask{
			{KindParaphrase, "What animal do we keep in the classroom?"},
			{KindSynonym, "What's our room's critter called?"},
		},
	},
	{
		id: "aide", topic: "classroom", general: true, who: "teacher",
		slots: []slot{{"aide", []string{"Mrs. Delacroix", "Ms. Harrington", "Mr. Abernathy"}, false}},
		say: []string{
			"My classroom aide this year is {aide}; she's in the room every morning for reading groups.",
		},
		reply: []string{
			"Plan the groups with {aide} a week ahead so she can prepare the materials.",
		},
		about: "my classroom aide",
		follow: [][2]string{
			{"Having an assistant in the room makes reading groups possible.", "Use the extra adult for the group that needs the most support."},
		},
		asks: []ask{
			{KindSynonym, "Who is the assistant in my room?"},
			{KindParaphrase, "Who helps me with reading groups in the mornings?"},
		},
	},
	{
		id: "specials", topic: "classroom", general: true, who: "teacher",
		slots: []slot{{"gymday", weekdays, true}, {"artday", weekdays, true}},
		say: []string{
			"Our class has gym on {gymday} and art on {artday} this semester.",
		},
		reply: []string{
			"Put the specials on the visual schedule so the kids know what's coming.",
		},
		about: "the gym and art schedule",
		follow: [][2]string{
			{"The kids are always wild after PE.", "A two-minute calm-down after gym helps them settle."},
		},
		asks: []ask{
			{KindSynonym, "Which day does my class have PE?"},
			{KindParaphrase, "When do my students go to art?"},
		},
	},
	{
		id: "seating", topic: "friends", who: "teacher",
		slots: []slot{{"seatmate", []string{"Quentin", "Rosalind", "Thaddeus", "Philippa"}, false}},
		say: []string{
			"I moved {L}'s desk next to {seatmate} because the two of them work well together.",
		},
		reply: []string{
			"Good pairing can calm a lot of behavior. Watch it for two weeks before judging.",
		},
		about: "moving {L}'s desk",
		follow: [][2]string{
			{"{L} seems happier with {pos} new seat partner.", "Good seating can change a child's whole day."},
		},
		asks: []ask{
			{KindParaphrase, "Who does {L} sit next to in class now?"},
			{KindSynonym, "Who is {L}'s new seat partner?"},
		},
	},
}
