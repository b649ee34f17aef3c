package mentor_test

import (
	"testing"

	"mentormemory/mentor"
)

// BenchmarkAdvanceSession measures what every post does to its live
// session: the closing state read from each exchange of a short session,
// one exchange at a time, as the posts bring them.
func BenchmarkAdvanceSession(b *testing.B) {
	exchanges := [][2]string{
		{"Emma got stuck on fractions again today. She cried when the worksheet had mixed numbers, and I'm honestly frustrated.",
			"That sounds hard for both of you. Try cutting a pizza into halves, then quarters, and let her name the pieces before any worksheet."},
		{"We tried the pizza idea at dinner. She said \"oh, I get it now!\" and then explained quarters to her brother.",
			"What a moment! Explaining it to someone else is the best sign she understands. Next time, let's try eighths with the same pizza."},
		{"How long should practice be? She loses focus after ten minutes or so.",
			"Ten minutes is fine at her age. Short, daily practice beats long sessions; stop while she still enjoys it."},
		{"Thanks, that helps. Her teacher says she reads well but rushes the maths homework.",
			"Rushing often hides worry. Ask her to read each problem aloud first; tomorrow we'll look at a checklist she can tick."},
	}
	var turns []mentor.Turn
	for _, e := range exchanges {
		turns = append(turns, mentor.Turn{Role: mentor.RoleUser, Content: e[0]}, mentor.Turn{Role: mentor.RoleAssistant, Content: e[1]})
	}
	newID := func() string { return "session" }
	for b.Loop() {
		live := mentor.CurrentSession{}
		for i := 0; i+2 <= len(turns); i += 2 {
			w := mentor.AdvanceSession(live, turns[i:i+2], "Emma", newID)
			live = mentor.CurrentSession{ID: w.ID, Closing: w.Closing}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(exchanges))/1000, "µs/exchange")
}
