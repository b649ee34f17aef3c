package handlers_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
	"mentormemory/test/latency"
)

// BenchmarkCounselorTimeToFirstText times what the service adds before a
// streamed reply's first words: the request's checks, the memory read
// (recall, and on a session's first message the opening and the profile),
// the context's assembly and token counts, and the stream's setup, with a
// model that streams at once. One request at a time, from sending it to
// reading its first text event; it reports p50 and p99, on a session's
// first message and on its 21st (20 exchanges of history).
//
//	go test ./handlers -run '^$' -bench CounselorTimeToFirstText -benchtime 300x
func BenchmarkCounselorTimeToFirstText(b *testing.B) {
	model := llmtest.NewChat(b, llmtest.ReplyContent("Try a pizza cut into quarters, and let her name each piece.", "stop"))
	svc, u, emma := apptest.StartWithLearner(b, apptest.Options{ModelURL: model.URL}, "Emma")
	types := []string{"academic", "personal", "preference", "context"}
	topics := []string{"fractions", "reading at bedtime", "long division", "her swimming lessons", "drawing maps",
		"the school play", "times tables", "spelling tests", "her friend Lily", "science club"}
	for i := range 60 {
		body := map[string]any{"learner_id": emma, "type": types[i%len(types)],
			"content": fmt.Sprintf("Emma and %s: note %d, she was %s about it", topics[i%len(topics)], i, []string{"excited", "frustrated", "calm"}[i%3])}
		// A memory like one already known is merged into it (200), the
		// others are added (201): either way, memory to recall.
		if r := svc.Call(b, u.Token, http.MethodPost, "/api/memories", body); r.Status != http.StatusCreated && r.Status != http.StatusOK {
			b.Fatalf("adding a memory: %s", r)
		}
	}
	var history []map[string]any
	for i := range 20 {
		svc.PostTurns(b, u, emma, apptest.Exchange(
			fmt.Sprintf("Emma did %s today and it went better than last week, number %d.", topics[i%len(topics)], i),
			"That's lovely to hear. Keep the sessions short and end on something she can do.")...).WantStatus(http.StatusOK)
		history = append(history,
			map[string]any{"role": "user", "content": fmt.Sprintf("Emma did %s today, number %d.", topics[i%len(topics)], i)},
			map[string]any{"role": "assistant", "content": "That's lovely to hear. Keep the sessions short."})
	}
	message := "Emma got upset over fractions at dinner again. How do I help her without a fight?"

	for _, tc := range []struct {
		name    string
		history []map[string]any
	}{{"first message", nil}, {"21st message", history}} {
		b.Run(tc.name, func(b *testing.B) {
			body := map[string]any{"message": message, "learner_id": emma, "history": tc.history}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				stream := svc.Stream(b, u.Token, "/api/counselor", body)
				ev, err := stream.Next()
				times = append(times, time.Since(start))
				if err != nil || ev.Name != "text" {
					b.Fatalf("first event %v, %v; want the reply's first text", ev, err)
				}
				b.StopTimer()
				stream.All()
				b.StartTimer()
			}
			b.StopTimer()
			latency.Report(b, "first-text", times)
		})
	}
}
