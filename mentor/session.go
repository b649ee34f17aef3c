package mentor

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// How much of each list the closing state keeps: the latest, and short.
const (
	closingArcMax     = 12
	closingMomentsMax = 5
	closingHooksMax   = 3
	closingMemoryMax  = 10
	quoteChars        = 160
)

// ClosingState is what the end of a live session will say, kept current
// after every exchange so that ending answers at once.
type ClosingState struct {
	SessionID string `json:"session_id"`
	Exchanges int    `json:"exchanges"`
	// EmotionalArc is the feelings shown, in order, repeats folded.
	EmotionalArc []string `json:"emotional_arc"`
	// KeyMoments are the learner's breakthroughs as the facilitator
	// reported them, quoted (LearnerBreakthrough).
	KeyMoments []string `json:"key_moments"`
	// NewMemories are the memories learnt in this session.
	NewMemories []string `json:"new_memories"`
	// NextSessionHooks are what the mentor promised or left for next time.
	NextSessionHooks []string `json:"next_session_hooks"`
	GoodbyeLine      string   `json:"goodbye_line"`
}

// UnmarshalJSON reads a stored closing state. Only the service writes one,
// but the row is reachable through Supabase's Data API; a state that cannot
// be read starts afresh rather than stop the session's posts, its end and
// the worker's sweep of idle sessions.
func (c *ClosingState) UnmarshalJSON(data []byte) error {
	type stored ClosingState // without this method
	var s stored
	if err := json.Unmarshal(data, &s); err != nil {
		s = stored{}
	}
	*c = ClosingState(s)
	return nil
}

// Ended is the outcome of ending a session.
type Ended struct {
	SessionID string       `json:"session_id"`
	Reason    string       `json:"reason"` // EndedByClient or EndedIdle
	EndedAt   time.Time    `json:"ended_at"`
	Closing   ClosingState `json:"closing"`
	Opening   Opening      `json:"next_opening"`
}

// Why a session ended.
const (
	EndedByClient = "ended"
	EndedIdle     = "idle"
)

// delight finds a moment of getting it or of joy in what someone says,
// which counts as excitement when no other feeling is named. Whose moment
// it is, the facilitator's or the learner's, it cannot tell: a key moment
// is only what LearnerBreakthrough finds.
var delight = regexp.MustCompile(`(?i)(\boh!|\boh,? i (see|get it)|\bmakes sense|\bgot it\b|\bthat helps|\bhelps actually|\bi get it\b|\bso that's why|\bthat was (actually )?(kind of )?fun|\bit worked\b|\bi did it\b|!$)`)

// delightWords holds a word of each of delight's phrases but the closing
// exclamation: the pattern, which no literal starts, is tried at every place
// of a text, and most turns hold none of its phrases (see mayMatch).
var delightWords = []string{"oh", "makes sense", "got it", "helps", "get it", "that's why", "fun", "it worked", "did it"}

// delighted reports whether delight finds a moment in text.
func delighted(text string) bool {
	text = strings.TrimSpace(text)
	return strings.HasSuffix(text, "!") || mayMatch(text, delightWords...) && delight.MatchString(text)
}

// nextTime finds what the mentor leaves for the next session.
var nextTime = regexp.MustCompile(`(?i)\b(next time|next session|next week|tomorrow|we'll (start|try|do|look)|let's (start|pick up) .* next)\b`)

var sentenceEnd = regexp.MustCompile(`[^.!?]+[.!?]*`)

// mayLeaveHooks reports whether text holds one of the words every hook
// nextTime finds starts with, so that most of the mentor's turns, which
// hold none, are not split into sentences and searched one by one.
func mayLeaveHooks(text string) bool {
	return mayMatch(text, "next", "tomorrow", "we'll")
}

// closingReadTurns is how many of a post's new turns are read for
// feelings, moments and hooks. A post of many new turns (a client sending a
// long history at once) is no single sitting: all its questions count as
// exchanges, but only its latest turns are read, which is all the closing
// state keeps anyway; reading the 500 turns of a 2 MB post took most of a
// second inside the post's transaction.
const closingReadTurns = 10

// AdvanceClosing folds a new exchange into the closing state.
func AdvanceClosing(state ClosingState, exchange []Turn, learnerName string) ClosingState {
	for _, t := range exchange {
		if t.Role == RoleUser {
			state.Exchanges++
		}
	}
	for _, t := range exchange[max(0, len(exchange)-closingReadTurns):] {
		if t.Role == RoleUser {
			emotions := EmotionsIn(t.Content)
			moment := LearnerBreakthrough(t.Content, learnerName)
			if moment != "" {
				state.KeyMoments = appendLatest(state.KeyMoments, quote(moment), closingMomentsMax)
			}
			// A breakthrough or delight with no feeling named is
			// excitement (an exclamation in frustration names one).
			if len(emotions) == 0 && (moment != "" || delighted(t.Content)) {
				emotions = []string{"excited"}
			}
			for _, e := range emotions {
				if len(state.EmotionalArc) == 0 || state.EmotionalArc[len(state.EmotionalArc)-1] != e {
					state.EmotionalArc = append(state.EmotionalArc, e)
				}
			}
			continue
		}
		if !mayLeaveHooks(t.Content) {
			continue
		}
		for _, sentence := range sentenceEnd.FindAllString(t.Content, -1) {
			if nextTime.MatchString(sentence) {
				state.NextSessionHooks = appendLatest(state.NextSessionHooks, quote(sentence), closingHooksMax)
			}
		}
	}
	state.EmotionalArc = lastN(state.EmotionalArc, closingArcMax)
	state.GoodbyeLine = goodbyeLine(state, learnerName)
	return state
}

// CurrentSession is a conversation's live session as a post finds it; the
// zero value stands for none.
type CurrentSession struct {
	ID      string
	Closing ClosingState
	// Idle is true when nobody spoke in it for SessionIdleLimit.
	Idle bool
}

// EndsBefore reports whether the live session ends before newTurns are
// stored: one idle past the limit ends first, so that its opening is ready,
// and the new turns start the next session.
func (s CurrentSession) EndsBefore(newTurns []Turn) bool {
	return len(newTurns) > 0 && s.Idle
}

// SessionWrite is what a post writes for its conversation's live session.
type SessionWrite struct {
	ID string
	// Started is true when no session was live: the new turns start this
	// one.
	Started bool
	Closing ClosingState
	// LastExchange is the end of the new turns' text, at most
	// MaxPreviousExchangeChars, which the next message is compared with to
	// tell a change of topic.
	LastExchange string
}

// AdvanceSession folds the new turns of a post into the live session, or
// starts a session with an id from newID when none is live.
func AdvanceSession(live CurrentSession, newTurns []Turn, learnerName string, newID func() string) SessionWrite {
	write := SessionWrite{ID: live.ID, Closing: live.Closing}
	if live.ID == "" {
		write = SessionWrite{ID: newID(), Started: true}
	}
	write.Closing.SessionID = write.ID
	write.Closing = AdvanceClosing(write.Closing, newTurns, learnerName)
	// The whole exchange, the mentor's reply included: a reply to the
	// mentor uses the mentor's words.
	write.LastExchange = joinContents(newTurns)
	if r := []rune(write.LastExchange); len(r) > MaxPreviousExchangeChars {
		write.LastExchange = string(r[len(r)-MaxPreviousExchangeChars:])
	}
	return write
}

// AddLearnt records memories learnt in the session.
func (c ClosingState) AddLearnt(contents ...string) ClosingState {
	for _, content := range contents {
		if !slices.Contains(c.NewMemories, content) {
			c.NewMemories = appendLatest(c.NewMemories, content, closingMemoryMax)
		}
	}
	return c
}

func goodbyeLine(state ClosingState, learnerName string) string {
	who := "today"
	if learnerName != "" {
		who = "today with " + learnerName
	}
	line := "Good work " + who + "."
	if n := len(state.EmotionalArc); n > 0 && positiveEmotion(state.EmotionalArc[n-1]) {
		line = "Great session " + who + ": it ended on a high."
	} else if len(state.KeyMoments) > 0 {
		line = "Good work " + who + ": there was a real breakthrough."
	}
	if len(state.NextSessionHooks) > 0 {
		hook := strings.TrimSuffix(state.NextSessionHooks[len(state.NextSessionHooks)-1], ".") + "."
		if !strings.HasPrefix(strings.ToLower(hook), "next time") {
			hook = "Next time: " + hook
		}
		line += " " + hook
	}
	return line
}

func positiveEmotion(e string) bool { return e == "excited" }

// quote shortens what someone said to a one-line quote.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > quoteChars {
		s = string([]rune(s)[:quoteChars-1]) + "…"
	}
	return s
}

func appendLatest(list []string, item string, keep int) []string {
	if item == "" || slices.Contains(list, item) {
		return list
	}
	return lastN(append(list, item), keep)
}

func lastN(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return slices.Clone(list[len(list)-n:])
}
