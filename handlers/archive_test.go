package handlers_test

import (
	"fmt"
	"net/http"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// archivedResult searches u's conversations, archived ones included, and
// returns the one archived result.
func archivedResult(t *testing.T, svc *apptest.Service, u apptest.User, search string) map[string]any {
	t.Helper()
	found := svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory?include_archive=true&search="+search, nil).
		WantStatus(http.StatusOK)
	for _, r := range found.Body["results"].([]any) {
		if result := r.(map[string]any); result["archived"] == true {
			return result
		}
	}
	t.Fatalf("no archived result for %q: %s", search, found.Raw)
	return nil
}

// TestAnArchivedConversationReadsBackWholeInOrder posts 52 turns, of
// which the first 50 go to the archive, opens the archive from the search
// result that found it, and reads every one of its turns back as posted,
// in the order said: whole in one page by default, and in pages that
// follow each other to the end.
func TestAnArchivedConversationReadsBackWholeInOrder(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	var posted []mentor.Turn
	for i := range 26 {
		exchange := []mentor.Turn{
			{ID: fmt.Sprintf("q-%d", i), Role: mentor.RoleUser, Content: fmt.Sprintf("Question %d: Emma and the <b>volcano</b> project", i)},
			// The mentor's replies have no client id.
			{Role: mentor.RoleAssistant, Content: fmt.Sprintf("Answer %d: baking soda and vinegar.\n- one step a day", i)},
		}
		posted = append(posted, exchange...)
		svc.PostTurns(t, dana, emma, exchange...).WantStatus(http.StatusOK)
	}
	result := archivedResult(t, svc, dana, "volcano")
	path := "/api/archives/" + result["id"].(string)

	whole := svc.Call(t, dana.Token, http.MethodGet, path, nil).WantStatus(http.StatusOK)
	if whole.Body["id"] != result["id"] || whole.Body["learner_id"] != emma || whole.Body["summary"] != result["summary"] ||
		whole.Body["summary"] == "" || number(whole.Body["turn_count"]) != 50 || whole.Body["archived_at"] == nil ||
		whole.Body["next_offset"] != nil {
		t.Fatalf("the archive: %s\nwant the search result's id, learner and summary, 50 turns and no next page", whole.Raw)
	}
	checkTurns(t, "the whole archive", whole.Body["turns"].([]any), posted[:50])

	// In pages of 20: 20, 20, then the last 10 and no next page.
	var paged []any
	offsets := []any{}
	for offset := 0; ; {
		page := svc.Call(t, dana.Token, http.MethodGet, fmt.Sprintf("%s?limit=20&offset=%d", path, offset), nil).WantStatus(http.StatusOK)
		paged = append(paged, page.Body["turns"].([]any)...)
		offsets = append(offsets, page.Body["next_offset"])
		if page.Body["next_offset"] == nil {
			break
		}
		offset = number(page.Body["next_offset"])
	}
	if fmt.Sprint(offsets) != "[20 40 <nil>]" {
		t.Fatalf("the pages' next offsets are %v, want [20 40 <nil>]", offsets)
	}
	checkTurns(t, "the pages", paged, posted[:50])

	// Past the end, an empty page.
	past := svc.Call(t, dana.Token, http.MethodGet, path+"?offset=50", nil).WantStatus(http.StatusOK)
	if len(past.Body["turns"].([]any)) != 0 || past.Body["next_offset"] != nil || number(past.Body["turn_count"]) != 50 {
		t.Fatalf("a page past the end: %s", past.Raw)
	}
}

// checkTurns compares turns as answered with the posted ones, field for
// field: client id when there was one, role, content, and the time stored.
func checkTurns(t *testing.T, name string, got []any, want []mentor.Turn) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d turns, want %d", name, len(got), len(want))
	}
	for i, w := range want {
		turn := got[i].(map[string]any)
		keys := 3 // role, content, created_at
		if w.ID != "" {
			keys++
		}
		if len(turn) != keys || (w.ID != "" && turn["id"] != w.ID) || turn["role"] != w.Role || turn["content"] != w.Content ||
			turn["created_at"] == "" {
			t.Fatalf("%s: turn %d is %v, want %+v with its time", name, i, turn, w)
		}
	}
}

// TestAnArchiveIsTheCallersAlone: a clear's archive opens for its
// facilitator, and is not found for another, as if it did not exist, nor
// is an id that names no archive; a malformed id or page is refused.
func TestAnArchiveIsTheCallersAlone(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	dana, other := svc.NewUser(t), svc.NewUser(t)
	posted := apptest.Exchange("Our plan for the summer: the volcano museum.", "A fine plan.")
	svc.PostTurns(t, dana, "", posted...).WantStatus(http.StatusOK)
	svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	result := archivedResult(t, svc, dana, "volcano")
	path := "/api/archives/" + result["id"].(string)

	mine := svc.Call(t, dana.Token, http.MethodGet, path, nil).WantStatus(http.StatusOK)
	if mine.Body["learner_id"] != nil || number(mine.Body["turn_count"]) != 2 {
		t.Fatalf("the general conversation's archive: %s", mine.Raw)
	}
	checkTurns(t, "a cleared conversation", mine.Body["turns"].([]any), posted)

	svc.Call(t, other.Token, http.MethodGet, path, nil).WantError(http.StatusNotFound, "Archived conversation not found")
	svc.Call(t, dana.Token, http.MethodGet, "/api/archives/00000000-0000-0000-0000-000000000001", nil).
		WantError(http.StatusNotFound, "Archived conversation not found")
	// A current conversation's id is no archive's.
	svc.PostTurns(t, dana, "", apptest.Exchange("A new volcano question.", "Ask away.")...).WantStatus(http.StatusOK)
	current := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	svc.Call(t, dana.Token, http.MethodGet, "/api/archives/"+current.Object("conversation_update")["id"].(string), nil).
		WantError(http.StatusNotFound, "Archived conversation not found")

	for query, message := range map[string]string{
		"/api/archives/not-a-uuid":    "archive id must be a uuid",
		path + "?limit=0":             "limit must be between 1 and 500",
		path + "?limit=501":           "limit must be between 1 and 500",
		path + "?limit=all":           "limit must be a whole number",
		path + "?offset=-1":           "offset must be between 0 and 100000",
		path + "?offset=100001":       "offset must be between 0 and 100000",
		path + "?offset=next":         "offset must be a whole number",
		"/api/archives/" + "12345678": "archive id must be a uuid",
	} {
		svc.Call(t, dana.Token, http.MethodGet, query, nil).WantError(http.StatusBadRequest, message)
	}
}
