package mentor

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzPlanRetrieval(f *testing.F) {
	f.Fuzz(func(t *testing.T, message, previous string, exchanges int) {
		// The service never plans for longer text (see ValidateRecallMessage
		// and MaxPreviousExchangeChars); huge inputs would only slow the
		// fuzzer past its deadline, so they are cut to what it plans for.
		message = truncateBytes(message, 4*MaxRecallMessageChar)
		previous = truncateBytes(previous, 4*MaxPreviousExchangeChars)
		session := SessionState{Exchanges: exchanges, PreviousMessage: previous}
		plan := PlanRetrieval(message, session)

		if len(plan.Reasons) == 0 || !unique(plan.Reasons) {
			t.Fatalf("reasons %q: want at least one, none repeated", plan.Reasons)
		}
		if light := slices.Equal(plan.Reasons, []string{ReasonEveryTurn}); plan.Deep == light {
			t.Fatalf("deep %v with reasons %q: deep iff a reason other than %q", plan.Deep, plan.Reasons, ReasonEveryTurn)
		}
		if plan.Deep && slices.Contains(plan.Reasons, ReasonEveryTurn) {
			t.Fatalf("deep with reasons %q", plan.Reasons)
		}

		if !slices.IsSorted(plan.Emotions) || !unique(plan.Emotions) {
			t.Fatalf("emotions %q: want sorted and unique", plan.Emotions)
		}
		for _, emotion := range plan.Emotions {
			if _, known := emotionCues[emotion]; !known {
				t.Fatalf("unknown emotion %q", emotion)
			}
		}
		if !slices.Equal(plan.Emotions, EmotionsIn(message)) {
			t.Fatalf("emotions %q, EmotionsIn %q", plan.Emotions, EmotionsIn(message))
		}
		emotional := ReasonEmotion + ": " + strings.Join(plan.Emotions, ", ")
		if (len(plan.Emotions) > 0) != slices.Contains(plan.Reasons, emotional) {
			t.Fatalf("emotions %q, reasons %q", plan.Emotions, plan.Reasons)
		}

		// The turn number alone makes some retrievals deep.
		turn := exchanges + 1
		if slices.Contains(plan.Reasons, ReasonFirstMessage) != (turn == 1) ||
			slices.Contains(plan.Reasons, ReasonNthTurn) != (turn%DeepRetrievalEvery == 0) {
			t.Fatalf("turn %d, reasons %q", turn, plan.Reasons)
		}
		// No previous message, no topic change.
		if previous == "" && slices.Contains(plan.Reasons, ReasonTopicChanged) {
			t.Fatalf("topic changed from nothing: %q", plan.Reasons)
		}

		if again := PlanRetrieval(message, session); plan.Deep != again.Deep ||
			!slices.Equal(plan.Reasons, again.Reasons) || !slices.Equal(plan.Emotions, again.Emotions) {
			t.Fatalf("not deterministic: %+v then %+v", plan, again)
		}
		// Cues match in any case; in ASCII, upper case lowers back exactly.
		if isASCII(message) && !slices.Equal(EmotionsIn(strings.ToUpper(message)), plan.Emotions) {
			t.Fatalf("emotions of %q depend on case", message)
		}
		if !utf8.ValidString(strings.Join(plan.Reasons, "")) {
			t.Fatalf("reasons %q are not valid UTF-8", plan.Reasons)
		}
	})
}

func unique(s []string) bool {
	seen := map[string]bool{}
	for _, v := range s {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func truncateBytes(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
