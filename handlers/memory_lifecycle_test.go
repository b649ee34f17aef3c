package handlers_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/uuid"

	"mentormemory/app/apptest"
)

// recalledContents lists every memory the context endpoint recalls for
// message, in every group.
func recalledContents(t *testing.T, svc *apptest.Service, u apptest.User, learnerID, message string) []string {
	t.Helper()
	res := svc.Call(t, u.Token, http.MethodGet, "/api/memories/context?learner_id="+learnerID+"&message="+url.QueryEscape(message), nil).
		WantStatus(http.StatusOK)
	var out []string
	for _, group := range []string{"academic", "personal", "preferences", "context", "emotional_patterns"} {
		if list, ok := res.Body[group].([]any); ok {
			out = append(out, memoryContents(list)...)
		}
	}
	return out
}

// memoryHistory returns a memory's history as the API lists it.
func memoryHistory(t *testing.T, svc *apptest.Service, u apptest.User, id string) []map[string]any {
	t.Helper()
	res := svc.Call(t, u.Token, http.MethodGet, "/api/memories/"+id+"/history", nil).WantStatus(http.StatusOK)
	var out []map[string]any
	for _, c := range res.Body["history"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

func changesOf(history []map[string]any) []string {
	var out []string
	for _, c := range history {
		out = append(out, c["change"].(string))
	}
	return out
}

// A changed fact replaces the fact it contradicts instead of strengthening
// it: the old memory is superseded (confidence 0.3, flagged for review,
// naming its successor), never recalled again, and still listed with its
// history.
func TestAContradictionSupersedes(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	old := svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma struggles with long division"})

	res := svc.Call(t, dana.Token, http.MethodPost, "/api/memories", map[string]any{
		"learner_id": emma, "type": "academic", "content": "Emma no longer struggles with long division",
	}).WantStatus(http.StatusCreated)
	if res.Body["merged"] != false || res.Body["superseded"] != old {
		t.Fatalf("the changed fact should be stored anew and supersede %s: %s", old, res.Raw)
	}
	current := res.Object("memory")["id"].(string)

	list := svc.Call(t, dana.Token, http.MethodGet, "/api/memories?learner_id="+emma, nil).WantStatus(http.StatusOK)
	var superseded map[string]any
	for _, m := range list.Body["memories"].([]any) {
		if m := m.(map[string]any); m["id"] == old {
			superseded = m
		}
	}
	if superseded == nil || superseded["status"] != "superseded" || superseded["superseded_by"] != current ||
		superseded["confidence"] != 0.3 || superseded["needs_review"] != true || superseded["mentions"] != 1.0 {
		t.Fatalf("the old memory as listed: %v", superseded)
	}

	recalled := recalledContents(t, svc, dana, emma, "How is long division going?")
	if !slices.Contains(recalled, "Emma no longer struggles with long division") ||
		slices.Contains(recalled, "Emma struggles with long division") {
		t.Fatalf("recall after the change: %q", recalled)
	}

	history := memoryHistory(t, svc, dana, old)
	if got := changesOf(history); !slices.Equal(got, []string{"created", "superseded"}) {
		t.Fatalf("the old memory's history: %v", got)
	}
	if h := history[1]; h["related_memory_id"] != current || h["confidence_before"] != 1.0 || h["confidence_after"] != 0.3 ||
		h["status_after"] != "superseded" || h["actor"] != "facilitator" {
		t.Fatalf("the supersession as recorded: %v", h)
	}

	// A repeat of the new fact reinforces it; the superseded one is never
	// merged into again.
	again := svc.Call(t, dana.Token, http.MethodPost, "/api/memories", map[string]any{
		"learner_id": emma, "type": "academic", "content": "Emma no longer struggles with long division!",
	}).WantStatus(http.StatusOK)
	if again.Object("memory")["id"] != current {
		t.Fatalf("the repeat merged into %v, want %s", again.Object("memory")["id"], current)
	}
}

// Confidence decays with time since a memory was last confirmed, when it
// is read: 0.1 for every 30 days, down to 0.3, where it leaves recall but
// stays listed. A confirmation makes it 1 again, and recalled.
func TestConfidenceDecaysWhenReadAndAConfirmationRestoresIt(t *testing.T) {
	svc, dana, max := apptest.StartWithLearner(t, apptest.Options{}, "Max")
	id := svc.AddMemory(t, dana, max, map[string]any{"type": "personal", "content": "Max loves building rockets", "confidence": 0.9})

	confidence := func() any {
		t.Helper()
		list := svc.Call(t, dana.Token, http.MethodGet, "/api/memories?learner_id="+max, nil).WantStatus(http.StatusOK)
		return list.Body["memories"].([]any)[0].(map[string]any)["confidence"]
	}
	svc.Exec(t, `update learner_memories set last_seen_at = now() - interval '65 days' where id = $1::uuid`, id)
	if got := confidence(); got != 0.7 {
		t.Fatalf("confidence 65 days after 0.9: %v, want 0.7", got)
	}
	if n := svc.Count(t, `select count(*) from learner_memories where id = $1::uuid and confidence > 0.89`, id); n != 1 {
		t.Fatal("decay rewrote the stored confidence; it must only be computed when read")
	}
	if !slices.Contains(recalledContents(t, svc, dana, max, "rockets"), "Max loves building rockets") {
		t.Fatal("a memory at 0.7 left recall")
	}

	svc.Exec(t, `update learner_memories set last_seen_at = now() - interval '400 days' where id = $1::uuid`, id)
	if got := confidence(); got != 0.3 {
		t.Fatalf("confidence 400 days after 0.9: %v, want the floor 0.3", got)
	}
	if slices.Contains(recalledContents(t, svc, dana, max, "rockets"), "Max loves building rockets") {
		t.Fatal("a memory long unconfirmed, at the floor, is still recalled")
	}

	res := svc.Call(t, dana.Token, http.MethodPatch, "/api/memories/"+id, map[string]any{"confirm": true}).WantStatus(http.StatusOK)
	if m := res.Object("memory"); m["confidence"] != 1.0 || m["content"] != "Max loves building rockets" {
		t.Fatalf("after the confirmation: %s", res.Raw)
	}
	if !slices.Contains(recalledContents(t, svc, dana, max, "rockets"), "Max loves building rockets") {
		t.Fatal("a confirmed memory is not recalled")
	}
	history := memoryHistory(t, svc, dana, id)
	if got := changesOf(history); !slices.Equal(got, []string{"created", "confirmed"}) {
		t.Fatalf("history: %v", got)
	}
	if h := history[1]; h["confidence_before"] != 0.3 || h["confidence_after"] != 1.0 {
		t.Fatalf("the confirmation as recorded: %v", h)
	}
}

// A person confirming a superseded memory says it still holds: it is
// current and recalled again, reviewed.
func TestConfirmingASupersededMemoryReinstatesIt(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	old := svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma struggles with long division"})
	svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma no longer struggles with long division"})

	res := svc.Call(t, dana.Token, http.MethodPatch, "/api/memories/"+old, map[string]any{"confirm": true}).WantStatus(http.StatusOK)
	if m := res.Object("memory"); m["status"] != "current" || m["superseded_by"] != nil || m["needs_review"] != false || m["confidence"] != 1.0 {
		t.Fatalf("after the confirmation: %s", res.Raw)
	}
	if !slices.Contains(recalledContents(t, svc, dana, emma, "long division"), "Emma struggles with long division") {
		t.Fatal("the reinstated memory is not recalled")
	}
}

// Every change is in the memory's history with the text before and after;
// forgetting blanks every text of it and records, without a word of the
// memory, that it was forgotten. Another facilitator sees none of it.
func TestHistoryRecordsCorrectionsAndForgettingBlanksIt(t *testing.T) {
	svc, dana, max := apptest.StartWithLearner(t, apptest.Options{}, "Max")
	other := svc.NewUser(t)
	id := svc.AddMemory(t, dana, max, map[string]any{"type": "personal", "content": "Max has a cat called Biscuit"})
	svc.Call(t, dana.Token, http.MethodPatch, "/api/memories/"+id, map[string]any{"content": "Max has a dog called Biscuit"}).
		WantStatus(http.StatusOK)

	history := memoryHistory(t, svc, dana, id)
	if got := changesOf(history); !slices.Equal(got, []string{"created", "corrected"}) {
		t.Fatalf("history: %v", got)
	}
	if h := history[1]; h["content_before"] != "Max has a cat called Biscuit" || h["content_after"] != "Max has a dog called Biscuit" ||
		h["actor"] != "facilitator" {
		t.Fatalf("the correction as recorded: %v", h)
	}
	svc.Call(t, other.Token, http.MethodGet, "/api/memories/"+id+"/history", nil).WantError(http.StatusNotFound, "Memory not found")

	svc.Call(t, dana.Token, http.MethodDelete, "/api/memories/"+id, nil).WantStatus(http.StatusOK)
	history = memoryHistory(t, svc, dana, id)
	if got := changesOf(history); !slices.Equal(got, []string{"created", "corrected", "forgotten"}) {
		t.Fatalf("history after forgetting: %v", got)
	}
	if n := svc.Count(t, `select count(*) from memory_history where memory_id = $1::uuid
		and (content_before is not null or content_after is not null)`, id); n != 0 {
		t.Fatalf("%d history rows still hold the forgotten memory's text", n)
	}
	if n := svc.Count(t, `select count(*) from memory_history where content_before like '%Biscuit%' or content_after like '%Biscuit%'`); n != 0 {
		t.Fatalf("the forgotten text is still in %d history rows", n)
	}

	svc.Call(t, dana.Token, http.MethodGet, "/api/memories/"+uuid.NewString()+"/history", nil).WantError(http.StatusNotFound, "Memory not found")
	svc.Call(t, dana.Token, http.MethodGet, "/api/memories/not-an-id/history", nil).WantError(http.StatusBadRequest, "memory id must be a uuid")
}

// A consolidation is asked for per learner: 202 with the run, the same run
// while it is queued, listed in the audit trail; another facilitator's
// learner is a 404 and a malformed id a 400.
func TestConsolidationIsAskedForAndListed(t *testing.T) {
	svc, dana, max := apptest.StartWithLearner(t, apptest.Options{}, "Max")
	other := svc.NewUser(t)

	first := svc.Call(t, dana.Token, http.MethodPost, "/api/learners/"+max+"/consolidate", nil).WantStatus(http.StatusAccepted)
	run := first.Object("run")
	if run["status"] != "queued" || run["trigger"] != "on_demand" || run["learner_id"] != max {
		t.Fatalf("the run: %s", first.Raw)
	}
	again := svc.Call(t, dana.Token, http.MethodPost, "/api/learners/"+max+"/consolidate", nil).WantStatus(http.StatusAccepted)
	if again.Object("run")["id"] != run["id"] {
		t.Fatalf("asked again while queued: %s, want the same run", again.Raw)
	}
	list := svc.Call(t, dana.Token, http.MethodGet, "/api/consolidations?learner_id="+max, nil).WantStatus(http.StatusOK)
	if list.Body["count"] != 1.0 || list.Body["runs"].([]any)[0].(map[string]any)["id"] != run["id"] {
		t.Fatalf("the audit trail: %s", list.Raw)
	}

	svc.Call(t, other.Token, http.MethodPost, "/api/learners/"+max+"/consolidate", nil).WantError(http.StatusNotFound, "Learner not found")
	if list := svc.Call(t, other.Token, http.MethodGet, "/api/consolidations", nil).WantStatus(http.StatusOK); list.Body["count"] != 0.0 {
		t.Fatalf("another facilitator sees runs: %s", list.Raw)
	}
	svc.Call(t, dana.Token, http.MethodPost, "/api/learners/not-a-uuid/consolidate", nil).WantError(http.StatusBadRequest, "learner id must be a uuid")
	svc.Call(t, dana.Token, http.MethodGet, "/api/consolidations?limit=500", nil).WantError(http.StatusBadRequest, "limit must be between 1 and 100")
}

// A learner's profile is read as JSON or Markdown; a facilitator's own
// lines are checked, kept, and queue a rebuild around them.
func TestLearnerProfileIsReadAndWritten(t *testing.T) {
	svc, dana, max := apptest.StartWithLearner(t, apptest.Options{}, "Max")
	other := svc.NewUser(t)

	empty := svc.Call(t, dana.Token, http.MethodGet, "/api/learners/"+max+"/profile", nil).WantStatus(http.StatusOK)
	if p := empty.Object("profile"); len(p["lines"].([]any)) != 0 || p["tokens"] != 0.0 || p["learner_name"] != "Max" {
		t.Fatalf("a profile never built: %s", empty.Raw)
	}

	written := svc.Call(t, dana.Token, http.MethodPut, "/api/learners/"+max+"/profile", map[string]any{
		"lines": []map[string]any{{"category": "goals", "text": "Read a chapter book alone by summer"}},
	}).WantStatus(http.StatusOK)
	lines := written.Object("profile")["lines"].([]any)
	if len(lines) != 1 || lines[0].(map[string]any)["by_facilitator"] != true || written.Object("profile")["tokens"].(float64) <= 0 {
		t.Fatalf("the profile with the facilitator's line: %s", written.Raw)
	}
	if runs := svc.Call(t, dana.Token, http.MethodGet, "/api/consolidations?learner_id="+max, nil).WantStatus(http.StatusOK); runs.Body["count"] != 1.0 {
		t.Fatalf("writing lines queued no rebuild: %s", runs.Raw)
	}

	res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/api/learners/" + max + "/profile?format=markdown", Token: dana.Token})
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "text/markdown; charset=utf-8" ||
		string(res.Raw) != "# Max\n\n## Goals and what is next\n\n- Read a chapter book alone by summer\n" {
		t.Fatalf("the Markdown page: %d %q %q", res.Status, res.Header.Get("Content-Type"), res.Raw)
	}

	svc.Call(t, dana.Token, http.MethodPut, "/api/learners/"+max+"/profile", map[string]any{
		"lines": []map[string]any{{"category": "hobbies", "text": "Chess"}},
	}).WantError(http.StatusBadRequest, "category must be one of who, strengths, struggles, goals, preferences, emotional")
	svc.Call(t, dana.Token, http.MethodPut, "/api/learners/"+max+"/profile", map[string]any{}).
		WantError(http.StatusBadRequest, "lines is required: a list of {category, text}, empty to remove yours")
	svc.Call(t, dana.Token, http.MethodGet, "/api/learners/"+max+"/profile?format=pdf", nil).
		WantError(http.StatusBadRequest, "format must be json or markdown")
	svc.Call(t, other.Token, http.MethodGet, "/api/learners/"+max+"/profile", nil).WantError(http.StatusNotFound, "Learner not found")
	svc.Call(t, other.Token, http.MethodPut, "/api/learners/"+max+"/profile", map[string]any{"lines": []any{}}).
		WantError(http.StatusNotFound, "Learner not found")
}
