package summarizer

// The cue lists decide which part of the summary a sentence belongs to. They
// are matched against raw tokens, not stems, because the tense matters: "we
// will try" is an action item, "we tried" is history.

// concernCues mark a facilitator worry: a difficulty, a refusal, a feeling.
var concernCues = setOf(`
worried worry worries worrying concern concerned concerns frustrated
frustrating frustration struggle struggles struggling struggled hard harder
difficult difficulty difficulties trouble problem problems issue issues can't
cannot won't refuses refuse refused refusing afraid scared anxious anxiety
nervous upset cries crying cried meltdown meltdowns tantrum tantrums behind
failing fails failed stuck confused overwhelmed stressed bullied bullying
lonely sad angry hates hate avoid avoids avoiding fight fights fighting
distracted unmotivated lazy falling lost stupid dumb shuts
`)

// adviceCues mark the mentor suggesting an approach.
var adviceCues = setOf(`
suggest suggests suggestion recommend recommends consider could might may
help helps helpful encourage encouraging praise celebrate break focus model
validate acknowledge instead offer notice use using give
important key idea approach strategy strategies option options works
`)

// actionCues mark a concrete next step or commitment.
var actionCues = setOf(`
try trying plan plans planning will next practice practise practicing
practising schedule scheduled remember tomorrow tonight week weekly daily
goal goals start starting set commit follow check review i'll we'll
`)

// negators cancel a feeling word that follows closely: "not worried".
var negators = setOf(`not no never isn't wasn't aren't don't doesn't didn't without hardly`)

// feelings maps a feeling word to the tone it is reported as, so that
// "worry", "worried" and "worrying" count as one tone.
var feelings = map[string]string{
	"frustrated": "frustrated", "frustrating": "frustrated", "frustration": "frustrated",
	"worried": "worried", "worry": "worried", "worries": "worried", "worrying": "worried",
	"anxious": "anxious", "anxiety": "anxious", "nervous": "anxious",
	"excited": "excited", "exciting": "excited", "thrilled": "excited",
	"proud": "proud",
	"happy": "happy", "glad": "happy", "delighted": "happy", "pleased": "happy",
	"confused": "confused", "confusing": "confused", "unsure": "confused",
	"overwhelmed": "overwhelmed", "overwhelming": "overwhelmed",
	"stressed": "stressed", "stressful": "stressed", "stress": "stressed",
	"upset": "upset", "sad": "sad", "heartbroken": "sad",
	"angry": "angry", "furious": "angry", "annoyed": "angry", "mad": "angry",
	"scared": "afraid", "afraid": "afraid", "fearful": "afraid",
	"hopeful": "hopeful", "optimistic": "hopeful", "encouraged": "hopeful",
	"relieved": "relieved",
	"grateful": "grateful", "thankful": "grateful",
	"tired": "exhausted", "exhausted": "exhausted", "drained": "exhausted",
	"discouraged": "discouraged", "defeated": "discouraged", "hopeless": "discouraged",
	"guilty": "guilty", "calm": "calm", "calmer": "calm",
}

// notTopics are content words too general to name what a conversation is
// about: every talk about a child says "child".
var notTopics = setOf(`
child children kid kids son sons daughter daughters student students learner
learners parent parents teacher teachers feel feels feeling felt thing year
years old sound sounds tell told ask asked look looks talk talked update
minute hour day week month today tonight morning evening night zero one two
three four five six seven eight nine ten twenty thirty hundred first second
third last lot
`)
