package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// TestSearchPrefersTheTimeAQuestionNames imports four conversations about
// Sam held at different times, three of them archived, and checks that a
// question naming a time finds the one held then first, among others that
// share its words; that a time alone finds a conversation with no word in
// common; that a conversation of another time still wins on words it
// shares and the one of the time does not; and that the mentor's search
// tool tells the model when each conversation was held.
func TestSearchPrefersTheTimeAQuestionNames(t *testing.T) {
	svc, dana, sam := apptest.StartWithLearner(t, apptest.Options{}, "Sam")
	at := func(year int, month time.Month, day int) time.Time {
		return time.Date(year, month, day, 18, 30, 0, 0, time.UTC)
	}
	held := func(when time.Time, question, answer string) []mentor.Turn {
		turns := apptest.Exchange(question, answer)
		turns[0].CreatedAt, turns[1].CreatedAt = when, when.Add(time.Minute)
		return turns
	}
	archived := func(turns []mentor.Turn) {
		svc.PostTurns(t, dana, sam, turns...).WantStatus(http.StatusOK)
		svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+sam, nil).WantStatus(http.StatusOK)
	}
	december, august, may := at(2023, time.December, 4), at(2023, time.August, 12), at(2022, time.May, 1)
	archived(held(december, "Sam spent the afternoon at the aquarium and loved the octopus.", "Ask him to draw the octopus."))
	archived(held(august, "Sam went to the aquarium with his cousins.", "Cousins make it an adventure."))
	archived(held(may, "Sam practised piano scales for twenty minutes.", "Short daily practice works best."))
	// The conversation going on, held yesterday.
	yesterday := time.Now().UTC().Add(-24 * time.Hour)
	svc.PostTurns(t, dana, sam, held(yesterday, "Sam asked about the aquarium again.", "Plan a visit for the holidays.")...).
		WantStatus(http.StatusOK)

	search := func(question string) []map[string]any {
		t.Helper()
		q := url.Values{"search": {question}, "include_archive": {"true"}}
		res := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?"+q.Encode(), nil).WantStatus(http.StatusOK)
		if res.Body["query"] != question {
			t.Errorf("the answer's query is %v, want the question as asked", res.Body["query"])
		}
		var results []map[string]any
		for _, r := range res.Body["results"].([]any) {
			results = append(results, r.(map[string]any))
		}
		return results
	}
	// firstHeld is when the first result's earliest turn was said.
	firstHeld := func(results []map[string]any) time.Time {
		t.Helper()
		if len(results) == 0 {
			t.Fatal("no result")
		}
		first, err := time.Parse(time.RFC3339, results[0]["first_turn_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return first
	}

	// Three conversations say "aquarium"; the time named picks one.
	for question, want := range map[string]time.Time{
		"What was Sam doing at the aquarium on December 4, 2023?": december,
		"the aquarium in August 2023":                             august,
		"Sam at the aquarium yesterday":                           yesterday,
	} {
		results := search(question)
		if got := firstHeld(results); !got.Equal(want.Truncate(time.Microsecond)) {
			t.Errorf("%q: the first result was held at %s, want %s", question, got, want)
		}
		if len(results) < 3 {
			t.Errorf("%q: %d results, want every aquarium conversation still found", question, len(results))
		}
	}
	// The time alone: no word of the question is in the piano conversation,
	// which is shown by its summary's start.
	results := search("What did we talk about on 1 May 2022?")
	if !firstHeld(results).Equal(may) {
		t.Fatalf("a question naming only a time should find the conversation held then first: %v", results)
	}
	if snippet, _ := results[0]["snippet"].(string); len(results[0]["matches"].([]any)) != 0 ||
		!strings.HasPrefix(results[0]["summary"].(string), snippet) || len(strings.Fields(snippet)) < 3 {
		t.Errorf("a conversation found by its time alone: snippet %q, matches %v, want its summary's start and no match",
			snippet, results[0]["matches"])
	}
	// Words still win: the octopus conversation of December against the
	// August one the question's time names.
	results = search("Sam and the octopus in August 2023")
	if !firstHeld(results).Equal(december) {
		t.Errorf("the conversation sharing the question's words should come first: %v", results)
	}
	if len(results) < 2 || !firstHeld(results[1:]).Equal(august) {
		t.Errorf("the conversation of the time named should follow it: %v", results)
	}
	// The mentor's model, asked "when did…", reads when the conversation
	// was held, not when it was archived.
	found := svc.Call(t, dana.Token, http.MethodPost, "/api/tools/call", toolCall("search_conversation_history",
		`{"search":"When did Sam go to the aquarium with his cousins?","include_archive":true}`)).WantStatus(http.StatusOK)
	items := found.Body["results"].([]any)
	if len(items) == 0 || items[0].(map[string]any)["date"] != august.Add(time.Minute).Format(time.RFC3339) {
		t.Errorf("the model should read the day the cousins' visit was talked about, %s: %s", august, found.Raw)
	}
	// Every result says when its turns were said.
	for _, r := range search("aquarium") {
		first, _ := time.Parse(time.RFC3339, r["first_turn_at"].(string))
		last, _ := time.Parse(time.RFC3339, r["last_turn_at"].(string))
		if first.IsZero() || last.Sub(first) != time.Minute {
			t.Errorf("result %v: turns said from %v to %v, want the minute its exchange took", r["id"], r["first_turn_at"], r["last_turn_at"])
		}
	}
}
