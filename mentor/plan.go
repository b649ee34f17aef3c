package mentor

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// DeepRetrievalEvery makes every Nth exchange of a session run deep
// retrieval, so long sessions refresh what the mentor has in mind even when
// nothing else calls for it.
const DeepRetrievalEvery = 5

// Reasons recall gives for its depth.
const (
	ReasonEveryTurn    = "every turn"
	ReasonTopicChanged = "topic changed"
	ReasonEmotion      = "emotional cue"
	ReasonRefersBack   = "refers back"
	ReasonNthTurn      = "5th turn"
	ReasonFirstMessage = "first message of the session"
)

// emotionCues maps words and phrases that show a feeling to the emotion
// recorded in memory metadata. Matching is on whole words, in lower case.
var emotionCues = map[string][]string{
	"frustrated": {"frustrated", "frustrating", "frustration", "ugh", "annoyed", "annoying", "hate", "fed up", "give up", "so hard"},
	"confused":   {"confused", "confusing", "don't get", "dont get", "don't understand", "dont understand", "get lost", "i'm lost", "im lost", "got lost", "makes no sense", "no idea", "where to start"},
	"anxious":    {"anxious", "stressed", "stress", "nervous", "worried", "worry", "scared", "panic", "overwhelmed"},
	"sad":        {"sad", "upset", "crying", "cried", "lonely"},
	"tired":      {"tired", "exhausted", "sleepy", "worn out"},
	"excited":    {"excited", "yay", "awesome", "love it", "so fun", "kind of fun", "proud"},
	"bored":      {"bored", "boring", "zone out", "zoned out"},
}

// backReference matches, in lower case, the phrases by which a message
// points back at what was said before, in this session or an earlier one.
// "before" counts only after what was said or done ("we tried that
// before"): alone it is too common ("before bed").
var backReference = regexp.MustCompile(`\b(like (we|you) did|like last time|last time|last session|(we|you) (talked|spoke|discussed)|remember|(did|said|tried|talked about|learned|covered|mentioned|discussed)( it| that| this)? before|earlier|previously|as usual|the other day|(you|we|i) said|(you|we|i) mentioned|as mentioned|you suggested|we tried|i told you|you told me|(go|going|come|coming) back to)\b`)

// RefersBack tells whether message points back at what was said before
// ("like we said earlier", "as you mentioned", "last time").
func RefersBack(message string) bool {
	return backReference.MatchString(strings.ToLower(message))
}

// WithoutBackReferences is message, in lower case, without the phrases by
// which it refers back: what is left says what it refers to.
func WithoutBackReferences(message string) string {
	return backReference.ReplaceAllString(strings.ToLower(message), " ")
}

// words returns the words of text: its runs of letters, digits and
// apostrophes.
func words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\''
	})
}

// paddedEmotionCues is emotionCues with a space either side of each cue,
// as EmotionsIn looks for them between words.
var paddedEmotionCues = func() map[string][]string {
	padded := map[string][]string{}
	for emotion, cues := range emotionCues {
		for _, cue := range cues {
			padded[emotion] = append(padded[emotion], " "+cue+" ")
		}
	}
	return padded
}()

// RetrievalPlan is how deep recall goes for one message, and why.
type RetrievalPlan struct {
	Deep     bool
	Reasons  []string
	Emotions []string
	// SessionStart says the message is the first of its session.
	SessionStart bool
}

// SessionState is what recall knows of the live session: how many
// exchanges it had and the text of the previous exchange.
type SessionState struct {
	Exchanges       int
	PreviousMessage string
}

// PlanRetrieval decides between light and deep retrieval for the next
// reply to message. Deep retrieval runs when the topic changed, the message
// shows a feeling or refers back, or on every DeepRetrievalEvery-th turn.
func PlanRetrieval(message string, session SessionState) RetrievalPlan {
	lower := strings.ToLower(message)
	plan := RetrievalPlan{Emotions: EmotionsIn(lower)}
	turn := session.Exchanges + 1
	if len(plan.Emotions) > 0 {
		plan.Reasons = append(plan.Reasons, ReasonEmotion+": "+strings.Join(plan.Emotions, ", "))
	}
	if backReference.MatchString(lower) {
		plan.Reasons = append(plan.Reasons, ReasonRefersBack)
	}
	if session.PreviousMessage != "" && topicChanged(session.PreviousMessage, message) {
		plan.Reasons = append(plan.Reasons, ReasonTopicChanged)
	}
	if plan.SessionStart = turn == 1; plan.SessionStart {
		plan.Reasons = append(plan.Reasons, ReasonFirstMessage)
	}
	if turn%DeepRetrievalEvery == 0 {
		plan.Reasons = append(plan.Reasons, ReasonNthTurn)
	}
	plan.Deep = len(plan.Reasons) > 0
	if !plan.Deep {
		plan.Reasons = []string{ReasonEveryTurn}
	}
	return plan
}

// EmotionsIn returns the emotions whose cues appear in text, sorted.
func EmotionsIn(text string) []string {
	padded := " " + strings.Join(words(strings.ToLower(text)), " ") + " "
	var found []string
	for emotion, cues := range paddedEmotionCues {
		for _, cue := range cues {
			if strings.Contains(padded, cue) {
				found = append(found, emotion)
				break
			}
		}
	}
	slices.Sort(found)
	return found
}

// topicChanged tells whether two messages share no content word, when the
// new one has enough words to have a topic of its own.
func topicChanged(previous, message string) bool {
	before := contentWords(previous)
	now := contentWords(message)
	if len(now) < 2 || len(before) == 0 {
		return false
	}
	for w := range now {
		if before[w] {
			return false
		}
	}
	return true
}

// contentWords returns the set of text's TopicWords.
func contentWords(text string) map[string]bool {
	words := map[string]bool{}
	for _, w := range TopicWords(text) {
		words[w] = true
	}
	return words
}

// TopicWords returns the words of text that carry its topic, in order and
// as often as they come: lower case, crudely singular, without stopwords or
// very short words.
func TopicWords(text string) []string {
	var topic []string
	for _, w := range words(strings.ToLower(text)) {
		w = strings.Trim(w, "'")
		if len(w) < 3 || stopwords[w] {
			continue
		}
		if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		topic = append(topic, w)
	}
	return topic
}

// TopicLessWords are the words, separated by white space, that say
// nothing about what a message is about: a change of topic is told without
// them, and recall by words leaves them out of a message.
const TopicLessWords = `about after again all also and any are because been before but can
	could did does doing don't dont for from get got had has have having her here him his how i'm into
	its it's just know like lol make more most much need not now off okay once only other our out over
	really said same she should some still such than that that's the their them then there these they
	thing things think this those too very want was way well were what when where which while who why
	will with would yeah yes you your you're kinda gonna wanna going today let's lets ok hey hi thanks
	tonight tomorrow yesterday last`

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(TopicLessWords) {
		m[w] = true
	}
	return m
}()

// MaxPreviousExchangeChars bounds how much of the previous exchange a
// session keeps to tell a change of topic: its end is what the next message
// answers.
const MaxPreviousExchangeChars = 2000

// SessionIdleLimit ends a session nobody spoke in for this long.
const SessionIdleLimit = 30 * time.Minute
