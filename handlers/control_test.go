package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
)

// A memory's sources are the turns it was learnt from, oldest first, with
// their dates and whether they are archived; a memory a person added has
// none, and says why.
func TestMemorySourcesListTheTurnsItWasLearntFrom(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	other := svc.NewUser(t)
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma loves drawing horses.", "Let's use horses in her maths.")...).WantStatus(http.StatusOK)
	added := svc.AddMemory(t, dana, emma, map[string]any{"type": "personal", "content": "Emma has a pony called Star"})
	// Stored as extraction stores one (worker TestExtractedMemoriesNameTheirSourceTurns covers that path).
	turnIDs := apptest.Scalar[[]int64](t, svc.Pool, `select array_agg(id order by id) from conversation_turns
		where facilitator_id = $1::uuid`, dana.ID)
	learnt := apptest.Scalar[string](t, svc.Pool, `insert into learner_memories (facilitator_id, learner_id, type, content,
			importance, confidence, source, source_turn_ids)
		values ($1::uuid, $2::uuid, 'personal', 'Emma loves drawing horses', 0.6, 0.7, 'extracted', $3)
		returning id::text`, dana.ID, emma, turnIDs)

	res := svc.Call(t, dana.Token, http.MethodGet, "/api/memories/"+learnt+"/sources", nil).WantStatus(http.StatusOK)
	turns := res.Body["turns"].([]any)
	if len(turns) != 2 || res.Body["source"] != "extracted" || res.Body["note"] != nil {
		t.Fatalf("sources of a learnt memory: %s", res.Raw)
	}
	first := turns[0].(map[string]any)
	if first["role"] != "user" || first["content"] != "Emma loves drawing horses." || first["archived"] != false || first["created_at"] == nil {
		t.Fatalf("the first source turn: %v", first)
	}

	// Cleared, the turns are archived, and still its sources.
	svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	res = svc.Call(t, dana.Token, http.MethodGet, "/api/memories/"+learnt+"/sources", nil).WantStatus(http.StatusOK)
	if turns := res.Body["turns"].([]any); len(turns) != 2 || turns[0].(map[string]any)["archived"] != true {
		t.Fatalf("sources after the clear: %s", res.Raw)
	}

	res = svc.Call(t, dana.Token, http.MethodGet, "/api/memories/"+added+"/sources", nil).WantStatus(http.StatusOK)
	if len(res.Body["turns"].([]any)) != 0 || !strings.Contains(res.Body["note"].(string), "Added by a person") {
		t.Fatalf("sources of an added memory: %s", res.Raw)
	}

	svc.Call(t, other.Token, http.MethodGet, "/api/memories/"+learnt+"/sources", nil).WantError(http.StatusNotFound, "Memory not found")
	svc.Call(t, dana.Token, http.MethodGet, "/api/memories/not-a-uuid/sources", nil).WantError(http.StatusBadRequest, "memory id must be a uuid")
}

// Forgetting by type and period removes exactly the memories selected,
// answers how many, and leaves each a history entry "forgotten" with no
// text, as forgetting one does. Bad input is a 400 that removes nothing.
func TestForgetMemoriesByTypeAndPeriod(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	dana, other := svc.NewUser(t), svc.NewUser(t)
	emma, max := svc.NewLearner(t, dana, "Emma"), svc.NewLearner(t, dana, "Max")
	oldSum := svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma struggles with long division"})
	newSum := svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma enjoys fractions with pizza"})
	pet := svc.AddMemory(t, dana, emma, map[string]any{"type": "personal", "content": "Emma has a pony called Star"})
	maxSum := svc.AddMemory(t, dana, max, map[string]any{"type": "academic", "content": "Max is fast at times tables"})
	svc.Exec(t, `update learner_memories set created_at = '2026-01-10T12:00:00Z' where id = $1::uuid`, oldSum)
	svc.Exec(t, `update learner_memories set created_at = '2026-03-10T12:00:00Z' where id = $1::uuid`, newSum)
	svc.Exec(t, `update learner_memories set created_at = '2026-01-10T12:00:00Z' where id = $1::uuid`, pet)
	memories := func() int { return svc.Count(t, `select count(*) from learner_memories`) }

	nothingRemoved := func(t *testing.T, _ apptest.Response) {
		if n := memories(); n != 4 {
			t.Fatalf("bad input removed memories: %d left of 4", n)
		}
	}
	for _, sc := range []apptest.Scenario{
		{Name: "no learner", Path: "/api/memories?type=academic", WantError: "learner_id is required: a learner's uuid, or null for the general memories"},
		{Name: "bad learner", Path: "/api/memories?learner_id=emma", WantError: "learner_id must be a uuid"},
		{Name: "unknown type", Path: "/api/memories?learner_id=" + emma + "&type=secret", WantError: "type must be one of academic, personal, preference, context"},
		{Name: "empty type", Path: "/api/memories?learner_id=" + emma + "&type=", WantError: "type must be one of academic, personal, preference, context"},
		{Name: "bad before", Path: "/api/memories?learner_id=" + emma + "&before=yesterday", WantError: "before must be an RFC 3339 time (2026-03-01T09:00:00Z) or a date (2026-03-01)"},
		{Name: "bad after", Path: "/api/memories?learner_id=" + emma + "&after=2026-13-01", WantError: "after must be an RFC 3339 time (2026-03-01T09:00:00Z) or a date (2026-03-01)"},
		{Name: "empty period", Path: "/api/memories?learner_id=" + emma + "&after=2026-03-01&before=2026-02-01", WantError: "after must be earlier than before"},
	} {
		sc.Method, sc.Token, sc.WantStatus, sc.Check = http.MethodDelete, dana.Token, http.StatusBadRequest, nothingRemoved
		sc.Run(t, svc)
	}
	svc.Call(t, other.Token, http.MethodDelete, "/api/memories?learner_id="+emma, nil).WantError(http.StatusNotFound, "Learner not found")
	nothingRemoved(t, apptest.Response{})

	// Emma's academic memories learnt before February: the old one only.
	res := svc.Call(t, dana.Token, http.MethodDelete, "/api/memories?learner_id="+emma+"&type=academic&before=2026-02-01", nil).WantStatus(http.StatusOK)
	if res.Body["removed"] != 1.0 || res.Body["success"] != true {
		t.Fatalf("forgetting Emma's academic memories before February: %s", res.Raw)
	}
	if n := svc.Count(t, `select count(*) from learner_memories where id = $1::uuid`, oldSum); n != 0 {
		t.Fatal("the old academic memory is still there")
	}
	history := svc.Call(t, dana.Token, http.MethodGet, "/api/memories/"+oldSum+"/history", nil).WantStatus(http.StatusOK)
	entries := history.Body["history"].([]any)
	last := entries[len(entries)-1].(map[string]any)
	if last["change"] != "forgotten" || last["actor"] != "facilitator" || strings.Contains(string(history.Raw), "long division") {
		t.Fatalf("the forgotten memory's history: %s", history.Raw)
	}

	// Every academic memory of Emma's, from March on: the new one.
	res = svc.Call(t, dana.Token, http.MethodDelete, "/api/memories?learner_id="+emma+"&type=academic&after=2026-03-01T00:00:00Z", nil).WantStatus(http.StatusOK)
	if res.Body["removed"] != 1.0 {
		t.Fatalf("forgetting from March on: %s", res.Raw)
	}
	// A type left out is every type; Max's memories are another learner's.
	res = svc.Call(t, dana.Token, http.MethodDelete, "/api/memories?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if res.Body["removed"] != 1.0 || memories() != 1 || svc.Count(t, `select count(*) from learner_memories where id = $1::uuid`, maxSum) != 1 {
		t.Fatalf("forgetting all of Emma's: %s; %d memories left, want Max's", res.Raw, memories())
	}
	res = svc.Call(t, dana.Token, http.MethodDelete, "/api/memories?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if res.Body["removed"] != 0.0 {
		t.Fatalf("forgetting again: %s", res.Raw)
	}
	if n := svc.Count(t, `select count(*) from memory_history where content_before is not null or content_after is not null`); n != 1 {
		t.Fatalf("%d history entries keep a text, want only Max's memory's creation", n)
	}
}

// Whether memory is learning now: the learner's extractions and
// consolidations queued and running, to the facilitator only.
func TestLearningNowCountsTheLearnersWork(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent(`{"memories": []}`, "stop"))
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{ModelURL: model.URL}, "Emma")
	other := svc.NewUser(t)
	path := "/api/learners/" + emma + "/learning"

	res := svc.Call(t, dana.Token, http.MethodGet, path, nil).WantStatus(http.StatusOK)
	if res.Body["active"] != false || res.Body["learning"] != true {
		t.Fatalf("learning now, before anything was said: %s", res.Raw)
	}
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma loves drawing horses.", "Horses it is.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma got 10 out of 10 in spelling.", "Well done her.")...).WantStatus(http.StatusOK)
	// Leased as the worker leases a job: its facilitator named, the token
	// made here (Citus takes no volatile function in an UPDATE).
	svc.Exec(t, `update memory_jobs set status = 'running', leased_until = now() + interval '1 minute', lease_token = $2::uuid
		where facilitator_id = $1::uuid and id = (select min(id) from memory_jobs where facilitator_id = $1::uuid and kind = 'extract')`,
		dana.ID, uuid.NewString())
	svc.Call(t, dana.Token, http.MethodPost, "/api/learners/"+emma+"/consolidate", nil).WantStatus(http.StatusAccepted)

	res = svc.Call(t, dana.Token, http.MethodGet, path, nil).WantStatus(http.StatusOK)
	extracting, consolidating := res.Object("extracting"), res.Object("consolidating")
	if extracting["queued"] != 1.0 || extracting["running"] != 1.0 || consolidating["queued"] != 1.0 ||
		consolidating["running"] != 0.0 || res.Body["active"] != true {
		t.Fatalf("learning now: %s", res.Raw)
	}

	svc.Call(t, other.Token, http.MethodGet, path, nil).WantError(http.StatusNotFound, "Learner not found")
	svc.Call(t, dana.Token, http.MethodGet, "/api/learners/emma/learning", nil).WantError(http.StatusBadRequest, "learner id must be a uuid")
}

// Clearing archives the conversation (nothing lost, still searchable) and
// starts the next session's opening afresh: the stored opening goes and
// the live session's closing state starts again, so the opening served
// after it holds nothing of the cleared conversation.
func TestClearStartsTheNextOpeningAfresh(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma is anxious about her volcano project.", "Next time we'll plan the volcano model together.")...).WantStatus(http.StatusOK)
	svc.EndSession(t, dana, emma)
	opening := svc.Call(t, dana.Token, http.MethodGet, "/api/opening-context?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if !strings.Contains(strings.ToLower(string(opening.Raw)), "volcano") {
		t.Fatalf("fixture: the opening before the clear says nothing of the volcano: %s", opening.Raw)
	}
	// A live session with hooks of its own.
	svc.PostTurns(t, dana, emma, apptest.Exchange("Emma finished the volcano base.", "Next time we'll paint the volcano.")...).WantStatus(http.StatusOK)

	svc.Call(t, dana.Token, http.MethodDelete, "/api/conversation-memory?learner_id="+emma, nil).WantStatus(http.StatusOK)
	opening = svc.Call(t, dana.Token, http.MethodGet, "/api/opening-context?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if opening.Body["opening"] != nil {
		t.Fatalf("the opening after the clear: %s", opening.Raw)
	}
	ended := svc.Call(t, dana.Token, http.MethodPost, "/api/sessions/end", map[string]any{"learner_id": emma}).WantStatus(http.StatusOK)
	if strings.Contains(strings.ToLower(string(ended.Raw)), "volcano") {
		t.Fatalf("the session ended after the clear remembers the cleared conversation: %s", ended.Raw)
	}
	opening = svc.Call(t, dana.Token, http.MethodGet, "/api/opening-context?learner_id="+emma, nil).WantStatus(http.StatusOK)
	if strings.Contains(strings.ToLower(string(opening.Raw)), "volcano") {
		t.Fatalf("the next opening remembers the cleared conversation: %s", opening.Raw)
	}
	found := svc.Call(t, dana.Token, http.MethodGet, "/api/conversation-memory?search=volcano&include_archive=true", nil).WantStatus(http.StatusOK)
	if found.Body["count"] == 0.0 {
		t.Fatalf("the cleared conversation is not in the archive's search: %s", found.Raw)
	}
}

// The learning and retention settings persist, are the facilitator's own,
// and refuse bad input with nothing changed.
func TestLearningAndRetentionSettings(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	other := svc.NewUser(t)
	learnerPath := "/api/learners/" + emma + "/settings"

	res := svc.Call(t, dana.Token, http.MethodGet, learnerPath, nil).WantStatus(http.StatusOK)
	if s := res.Object("settings"); s["learning"] != true || s["account_learning"] != true || s["learner_id"] != emma {
		t.Fatalf("Emma's settings by default: %s", res.Raw)
	}
	res = svc.Call(t, dana.Token, http.MethodGet, "/api/account/settings", nil).WantStatus(http.StatusOK)
	if s := res.Object("settings"); s["learning"] != true || s["retention_days"] != nil {
		t.Fatalf("the account's settings by default: %s", res.Raw)
	}

	svc.Call(t, dana.Token, http.MethodPut, learnerPath, map[string]any{"learning": false}).WantStatus(http.StatusOK)
	svc.Call(t, dana.Token, http.MethodPut, "/api/account/settings", map[string]any{"retention_days": 90}).WantStatus(http.StatusOK)
	res = svc.Call(t, dana.Token, http.MethodPut, "/api/account/settings", map[string]any{"learning": false}).WantStatus(http.StatusOK)
	if s := res.Object("settings"); s["learning"] != false || s["retention_days"] != 90.0 {
		t.Fatalf("the account's settings, changed one at a time: %s", res.Raw)
	}
	res = svc.Call(t, dana.Token, http.MethodGet, learnerPath, nil).WantStatus(http.StatusOK)
	if s := res.Object("settings"); s["learning"] != false || s["account_learning"] != false {
		t.Fatalf("Emma's settings after turning learning off: %s", res.Raw)
	}
	settings := func() string {
		return apptest.Scalar[string](t, svc.Pool, `select (select coalesce(string_agg(s::text, ';'), '') from facilitator_settings s) || '|' ||
			(select coalesce(string_agg(l.learning::text, ';'), '') from learner_settings l)`)
	}
	before := settings()
	unchanged := func(t *testing.T, _ apptest.Response) {
		if after := settings(); after != before {
			t.Fatalf("settings changed:\nbefore %s\nafter  %s", before, after)
		}
	}
	for _, sc := range []apptest.Scenario{
		{Name: "learner: no learning", Path: learnerPath, Body: map[string]any{}, WantError: "learning is required: true or false"},
		{Name: "learner: learning not a boolean", Path: learnerPath, Body: map[string]any{"learning": "yes"}, WantError: "Malformed JSON: learning has the wrong type"},
		{Name: "learner: no body", Path: learnerPath, WantError: "Request body required (JSON)"},
		{Name: "learner: bad id", Path: "/api/learners/emma/settings", Body: map[string]any{"learning": true}, WantError: "learner id must be a uuid"},
		{Name: "account: nothing to change", Path: "/api/account/settings", Body: map[string]any{}, WantError: "Nothing to change: send learning (true or false) or retention_days (days, or null)"},
		{Name: "account: zero days", Path: "/api/account/settings", Body: map[string]any{"retention_days": 0}, WantError: "retention_days must be between 1 and 3650, or null to keep memories"},
		{Name: "account: too many days", Path: "/api/account/settings", Body: map[string]any{"retention_days": 3651}, WantError: "retention_days must be between 1 and 3650, or null to keep memories"},
		{Name: "account: part of a day", Path: "/api/account/settings", Body: map[string]any{"retention_days": 1.5}, WantError: "retention_days must be a whole number of days, or null to keep memories"},
		{Name: "account: days as text", Path: "/api/account/settings", Body: map[string]any{"retention_days": "30", "learning": true}, WantError: "retention_days must be a whole number of days, or null to keep memories"},
	} {
		sc.Method, sc.Token, sc.WantStatus, sc.Check = http.MethodPut, dana.Token, http.StatusBadRequest, unchanged
		sc.Run(t, svc)
	}
	svc.Call(t, other.Token, http.MethodPut, learnerPath, map[string]any{"learning": true}).WantError(http.StatusNotFound, "Learner not found")
	svc.Call(t, other.Token, http.MethodGet, learnerPath, nil).WantError(http.StatusNotFound, "Learner not found")
	unchanged(t, apptest.Response{})
	res = svc.Call(t, other.Token, http.MethodGet, "/api/account/settings", nil).WantStatus(http.StatusOK)
	if s := res.Object("settings"); s["learning"] != true || s["retention_days"] != nil {
		t.Fatalf("another facilitator's account settings: %s", res.Raw)
	}

	// null turns retention off, and leaves learning as it was.
	res = svc.Call(t, dana.Token, http.MethodPut, "/api/account/settings", map[string]any{"retention_days": nil}).WantStatus(http.StatusOK)
	if s := res.Object("settings"); s["learning"] != false || s["retention_days"] != nil {
		t.Fatalf("retention turned off: %s", res.Raw)
	}
	// With learning off, a consolidation asked for is refused, a 409.
	svc.Call(t, dana.Token, http.MethodPost, "/api/learners/"+emma+"/consolidate", nil).
		WantError(http.StatusConflict, "Learning is off for this learner; turn it on to learn and consolidate")
}
