package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/counselor"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
	"mentormemory/tokens"
)

// longSession is n exchanges about homework, each turn a few sentences
// naming its exchange, so that 300 of them are far over the budget.
func longSession(n int) []mentor.Turn {
	var turns []mentor.Turn
	for i := range n {
		turns = append(turns, apptest.Exchange(
			fmt.Sprintf("Exchange %d. Homework took ages again tonight and there were tears at the kitchen table; what should I change tomorrow?", i),
			fmt.Sprintf("Reply %d. Keep homework to twenty minutes, start after a snack, and stop at the first tears; praise the effort, not the answer.", i),
		)...)
	}
	return turns
}

// sentTokens counts a request as the model received it: every message's
// text and overhead, the reply's start, and the tools offered.
func sentTokens(t *testing.T, req llmtest.ChatRequest) int {
	t.Helper()
	offered, err := json.Marshal(req.Tools)
	if err != nil {
		t.Fatal(err)
	}
	total := tokens.Count(string(offered)) + 3
	for _, m := range req.Messages {
		total += tokens.Count(m.Content) + 3
	}
	return total
}

// contextTokens reads an answer's context_tokens and checks that its
// blocks add up to its total.
func contextTokens(t *testing.T, res apptest.Response) (total int, blocks map[string]int, evicted, broughtBack int) {
	t.Helper()
	counted := res.Object("context_tokens")
	blocks = map[string]int{}
	sum := 0
	for name, n := range counted["blocks"].(map[string]any) {
		blocks[name] = int(n.(float64))
		sum += blocks[name]
	}
	total = int(counted["total"].(float64))
	if sum != total {
		t.Errorf("the blocks add up to %d, the total is %d: %v", sum, total, blocks)
	}
	if counted["budget"] != float64(counselor.DefaultContextTokens) {
		t.Errorf("budget %v, want the default %d", counted["budget"], counselor.DefaultContextTokens)
	}
	return total, blocks, int(counted["evicted_exchanges"].(float64)), int(counted["brought_back"].(float64))
}

// A session of 300 exchanges goes to the model within the context's
// budget: the oldest exchanges leave, whole, the newest stay in order
// before the message, and the answer says how many left. A message as long
// as the chat allows, on top of that history, is answered whole, with
// fewer exchanges beside it.
func TestCounselorKeepsALongSessionWithinItsTokenBudget(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Try a timer.", "stop"))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})
	history := longSession(300)
	report := strings.Repeat("Emma read aloud with expression and the teacher was pleased. ", 400)[:mentor.MaxTurnChars]

	for i, message := range []string{"And what about weekends?", report} {
		res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": message, "history": history}).
			WantStatus(http.StatusOK)
		total, blocks, evicted, _ := contextTokens(t, res)
		asked := model.Calls()[i].Body
		if sent := sentTokens(t, asked); sent > counselor.DefaultContextTokens || total > counselor.DefaultContextTokens {
			t.Fatalf("the model was sent %d tokens (%d counted), over the budget of %d", sent, total, counselor.DefaultContextTokens)
		}
		turns := asked.Messages[1 : len(asked.Messages)-1]
		if asked.Messages[0].Role != "system" || asked.Last("user") != strings.TrimSpace(message) {
			t.Fatal("the model should get the system prompt first and the whole message last")
		}
		kept := len(turns)
		if kept == 0 || kept%2 != 0 || evicted != 300-kept/2 || blocks["conversation"] == 0 {
			t.Fatalf("%d turns kept and %d exchanges evicted: exchanges leave whole", kept, evicted)
		}
		for j, turn := range turns {
			if want := history[len(history)-kept+j]; turn.Role != want.Role || turn.Content != want.Content {
				t.Fatalf("turn %d sent is %q, want the history's newest in order: %q", j, turn.Content, want.Content)
			}
		}
		if !strings.Contains(asked.First("system"), fmt.Sprintf("The session's first %d exchanges are not shown here", evicted)) {
			t.Fatal("the system prompt should say that earlier exchanges were left out")
		}
		t.Logf("message of %d characters: %d tokens, %d exchanges kept, %d evicted, blocks %v", len(message), total, kept/2, evicted, blocks)
	}
	first, _, _, _ := contextTokens(t, svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi", "history": history[:2]}).
		WantStatus(http.StatusOK))
	if first == 0 {
		t.Fatal("a short session should be counted too")
	}

	tooMany := append(longSession(500), apptest.Exchange("one more", "too many")...)
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hi", "history": tooMany}).
		WantError(http.StatusBadRequest, "History too long: send at most the last 1000 turns")
}

// When the message refers back, the evicted turns that best match it come
// back into the context, marked as earlier in the session: at most three,
// and none that shares only a word every turn has.
func TestCounselorBringsBackEvictedTurnsTheMessageRefersTo(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Use poster paint.", "stop"))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})
	history := longSession(300)
	for _, exchange := range []int{5, 15, 25, 35} {
		history[2*exchange].Content = fmt.Sprintf("Exchange %d. Emma is building a volcano diorama for the science fair and wants it to erupt.", exchange)
	}

	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "Like we said earlier, what paint should the volcano diorama get?", "history": history}).WantStatus(http.StatusOK)
	total, blocks, evicted, broughtBack := contextTokens(t, res)
	system := model.Calls()[0].Body.First("system")
	at := strings.Index(system, "=== EARLIER IN THIS SESSION ===")
	if at < 0 || evicted <= 35 || total > counselor.DefaultContextTokens {
		t.Fatalf("%d exchanges evicted, %d tokens; the system prompt:\n%s", evicted, total, system)
	}
	earlier := system[at:]
	if broughtBack != 3 || strings.Count(earlier, "\nFacilitator: ") != 3 || strings.Count(earlier, "volcano diorama") != 3 || blocks["earlier"] == 0 {
		t.Fatalf("three volcano turns should come back, marked as earlier (%d said):\n%s", broughtBack, earlier)
	}
	if strings.Contains(earlier, "Homework took ages") {
		t.Fatalf("a turn that shares no rare word came back:\n%s", earlier)
	}

	// "homework" is in every turn: below the floor, nothing comes back.
	res = svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "As you mentioned before, what about homework?", "history": history}).WantStatus(http.StatusOK)
	if _, _, _, broughtBack := contextTokens(t, res); broughtBack != 0 || strings.Contains(model.Calls()[1].Body.First("system"), "\nFacilitator: ") {
		t.Fatalf("%d turns came back for a word every turn has", broughtBack)
	}
	// Without a back-reference, nothing comes back either.
	res = svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{
		"message": "What paint should the volcano diorama get?", "history": history}).WantStatus(http.StatusOK)
	if _, _, _, broughtBack := contextTokens(t, res); broughtBack != 0 {
		t.Fatalf("%d turns came back without a back-reference", broughtBack)
	}
}

// usedIDs are the ids of memories_used of kind, in order.
func usedIDs(res apptest.Response, kind string) []string {
	var ids []string
	for _, u := range res.Body["memories_used"].([]any) {
		if u := u.(map[string]any); u["kind"] == kind {
			ids = append(ids, u["id"].(string))
		}
	}
	return ids
}

// Each reply says what went into its context: the memories whose text the
// model was given (and no other), the conversation whose summary it read,
// how personal the reply is, the model, and its timings.
func TestCounselorSaysWhatMemoryItUsed(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Fractions with pizza again.", "stop"))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL})

	// A facilitator the mentor knows nothing of: no memory, none used.
	res := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Hello there"}).WantStatus(http.StatusOK)
	if res.Body["personalization"] != mentor.PersonalizationNone || len(res.Body["memories_used"].([]any)) != 0 || res.Body["model"] != "test-model" {
		t.Fatalf("a reply from no memory: %s", res.Raw)
	}
	timings := res.Object("timings")
	if _, ok := timings["recall_ms"].(float64); !ok {
		t.Fatalf("timings: %v", timings)
	}
	contextTokens(t, res)

	emma := svc.NewLearner(t, u, "Emma")
	contents := map[string]string{}
	for _, m := range []map[string]any{
		{"type": "academic", "content": "Emma mixes up thirds and quarters in fractions"},
		{"type": "preference", "content": "Emma learns fractions best with pizza slices"},
		{"type": "personal", "content": "Emma has a cat called Biscuit"},
	} {
		contents[svc.AddMemory(t, u, emma, m)] = m["content"].(string)
	}
	svc.PostTurns(t, u, emma, apptest.Exchange("Emma struggled with fractions of pizza slices today.", "Next time: pizza fractions again.")...).
		WantStatus(http.StatusOK)
	svc.EndSession(t, u, emma)

	// The first message of the next session: deep, with the conversation's
	// summary (Emma has no profile yet) and the opening from the session.
	res = svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "More fractions of pizza slices?", "learner_id": emma}).
		WantStatus(http.StatusOK)
	system := model.Last(t).First("system")
	checkUsed := func(res apptest.Response, system string) {
		t.Helper()
		used := usedIDs(res, mentor.ContextMemory)
		if len(used) == 0 {
			t.Fatalf("no memory listed as used: %s", res.Raw)
		}
		for id, content := range contents {
			if listed := slices.Contains(used, id); listed != strings.Contains(system, content) {
				t.Errorf("memory %q listed %v, in the context %v", content, listed, !listed)
			}
		}
	}
	checkUsed(res, system)
	conversation := svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if ids := usedIDs(res, mentor.ContextConversation); len(ids) != 1 || ids[0] != conversation.Object("conversation_update")["id"] ||
		!strings.Contains(system, "=== CONVERSATION MEMORY ===") {
		t.Fatalf("the conversation whose summary went in should be listed: %s", res.Raw)
	}
	if ids := usedIDs(res, mentor.ContextSession); len(ids) != 1 || !strings.Contains(system, "=== SESSION OPENING ===") {
		t.Fatalf("the session the opening came from should be listed: %s", res.Raw)
	}
	if res.Body["personalization"] != mentor.PersonalizationDeep {
		t.Fatalf("a first message's reply is deep: %s", res.Raw)
	}
	_, blocks, _, _ := contextTokens(t, res)
	if blocks["summary"] == 0 || blocks["opening"] == 0 || blocks["memories"] == 0 || blocks["pinned"] == 0 || blocks["message"] == 0 {
		t.Fatalf("blocks %v", blocks)
	}

	// Later in the session, on the same topic: light.
	svc.PostTurns(t, u, emma, apptest.Exchange("More fractions of pizza slices?", "Fractions with pizza again.")...).WantStatus(http.StatusOK)
	res = svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Which fractions of pizza slices first?", "learner_id": emma,
		"history": apptest.Exchange("More fractions of pizza slices?", "Fractions with pizza again.")}).WantStatus(http.StatusOK)
	if res.Object("retrieval")["mode"] != mentor.RetrievalLight || res.Body["personalization"] != mentor.PersonalizationLight {
		t.Fatalf("a later message on the same topic is light: %s", res.Raw)
	}
	checkUsed(res, model.Last(t).First("system"))
	if len(usedIDs(res, mentor.ContextConversation)) != 0 {
		t.Fatalf("the summary goes only with a session's first message: %s", res.Raw)
	}
}
