package handlers_test

import (
	"net/http"
	"net/url"
	"testing"

	"mentormemory/app/apptest"
)

func memoryContents(group any) []string {
	var out []string
	for _, m := range group.([]any) {
		out = append(out, m.(map[string]any)["content"].(string))
	}
	return out
}

func TestMemoriesAddCorrectForget(t *testing.T) {
	svc, dana, max := apptest.StartWithLearner(t, apptest.Options{}, "Max")

	id := svc.AddMemory(t, dana, max, map[string]any{
		"type": "personal", "content": "Max has a dog called Biscuit",
		"metadata": map[string]any{"topic": "pets", "emotion": "Excited"},
	})
	list := svc.Call(t, dana.Token, http.MethodGet, "/api/memories?learner_id="+max, nil).WantStatus(http.StatusOK)
	got := list.Body["memories"].([]any)
	if len(got) != 1 {
		t.Fatalf("want 1 memory, got %s", list.Raw)
	}
	m := got[0].(map[string]any)
	if m["source"] != "added" || m["confidence"] != 1.0 || m["importance"] != 0.5 || m["mentions"] != 1.0 {
		t.Fatalf("defaults or source wrong: %s", list.Raw)
	}
	if m["metadata"].(map[string]any)["emotion"] != "excited" {
		t.Fatalf("emotion should be stored in lower case: %s", list.Raw)
	}

	// Saying it again reinforces the memory instead of storing a copy.
	again := svc.Call(t, dana.Token, http.MethodPost, "/api/memories", map[string]any{
		"learner_id": max, "type": "personal", "content": "Max has a dog called Biscuit!", "confidence": 0.8, "importance": 0.6,
	}).WantStatus(http.StatusOK)
	merged := again.Body["memory"].(map[string]any)
	if again.Body["merged"] != true || merged["id"] != id || merged["mentions"] != 2.0 || merged["importance"].(float64) <= 0.6 {
		t.Fatalf("repeat should merge into %s and raise importance: %s", id, again.Raw)
	}
	if n := svc.Count(t, `select count(*) from learner_memories where learner_id = $1::uuid`, max); n != 1 {
		t.Fatalf("want 1 stored memory after the repeat, got %d", n)
	}

	fixed := svc.Call(t, dana.Token, http.MethodPatch, "/api/memories/"+id, map[string]any{"content": "Max has a cat called Biscuit"}).
		WantStatus(http.StatusOK)
	if fixed.Body["memory"].(map[string]any)["content"] != "Max has a cat called Biscuit" {
		t.Fatalf("correction not applied: %s", fixed.Raw)
	}
	svc.Call(t, dana.Token, http.MethodPatch, "/api/memories/"+id, map[string]any{}).
		WantError(http.StatusBadRequest, "Nothing to change: send type, content, importance, confidence, metadata or confirm")
	svc.Call(t, dana.Token, http.MethodPatch, "/api/memories/"+id, map[string]any{"importance": 2}).
		WantError(http.StatusBadRequest, "importance must be between 0 and 1")

	svc.Call(t, dana.Token, http.MethodDelete, "/api/memories/"+id, nil).WantStatus(http.StatusOK)
	svc.Call(t, dana.Token, http.MethodDelete, "/api/memories/"+id, nil).WantError(http.StatusNotFound, "Memory not found")
	if n := svc.Count(t, `select count(*) from learner_memories`); n != 0 {
		t.Fatalf("forgotten memory still stored")
	}
}

func TestMemoriesBadInput(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	nothingStored := func(t *testing.T, _ apptest.Response) {
		if n := svc.Count(t, `select count(*) from learner_memories`); n != 0 {
			t.Fatalf("bad input stored %d memories", n)
		}
	}
	for _, sc := range []apptest.Scenario{
		{Name: "unknown type", Body: map[string]any{"learner_id": emma, "type": "secret", "content": "x"}, WantError: "type must be one of academic, personal, preference, context"},
		{Name: "no content", Body: map[string]any{"learner_id": emma, "type": "academic", "content": "  "}, WantError: "Memory content required"},
		{Name: "confidence out of range", Body: map[string]any{"learner_id": emma, "type": "academic", "content": "x", "confidence": -0.1}, WantError: "confidence must be between 0 and 1"},
		{Name: "nested metadata", Body: map[string]any{"learner_id": emma, "type": "academic", "content": "x", "metadata": map[string]any{"topic": map[string]any{}}}, WantError: "metadata topic must be a string, a number or a boolean"},
		{Name: "bad metadata key", Body: map[string]any{"learner_id": emma, "type": "academic", "content": "x", "metadata": map[string]any{"Bad Key": "v"}}, WantError: `metadata key "Bad Key" must be lower-case letters, digits and _ (at most 40 characters)`},
		{Name: "bad learner", Body: map[string]any{"learner_id": "nope", "type": "academic", "content": "x"}, WantError: "learner_id must be a uuid"},
		{Name: "NUL", Body: map[string]any{"learner_id": emma, "type": "academic", "content": "a\u0000b"}, WantError: "Memory content must not contain NUL characters"},
		{Name: "correct a memory id not a uuid", Method: http.MethodPatch, Path: "/api/memories/not-a-uuid", Body: map[string]any{"content": "x"}, WantError: "memory id must be a uuid"},
		{Name: "list an unknown type", Method: http.MethodGet, Path: "/api/memories?type=secret", WantError: "type must be one of academic, personal, preference, context"},
	} {
		if sc.Method == "" {
			sc.Method, sc.Path = http.MethodPost, "/api/memories"
		}
		sc.Token, sc.WantStatus, sc.Check = dana.Token, http.StatusBadRequest, nothingStored
		sc.Run(t, svc)
	}
}

func TestMemoriesAreIsolated(t *testing.T) {
	svc, dana, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	other := svc.NewUser(t)
	id := svc.AddMemory(t, dana, emma, map[string]any{"type": "academic", "content": "Emma struggles with fractions"})
	ownerKeepsIt := func(t *testing.T, _ apptest.Response) {
		if n := svc.Count(t, `select count(*) from learner_memories where id = $1::uuid and content = 'Emma struggles with fractions'`, id); n != 1 {
			t.Fatal("the owner's memory changed")
		}
	}

	for _, sc := range []apptest.Scenario{
		{Method: http.MethodGet, Path: "/api/memories?learner_id=" + emma, WantError: "Learner not found"},
		{Method: http.MethodGet, Path: "/api/memories/context?learner_id=" + emma + "&message=fractions", WantError: "Learner not found"},
		{Method: http.MethodPost, Path: "/api/memories", Body: map[string]any{"learner_id": emma, "type": "academic", "content": "x"}, WantError: "Learner not found"},
		{Method: http.MethodPatch, Path: "/api/memories/" + id, Body: map[string]any{"content": "changed"}, WantError: "Memory not found"},
		{Method: http.MethodDelete, Path: "/api/memories/" + id, WantError: "Memory not found"},
	} {
		sc.Token, sc.WantStatus, sc.Check = other.Token, http.StatusNotFound, ownerKeepsIt
		sc.Run(t, svc)
	}
	all := svc.Call(t, other.Token, http.MethodGet, "/api/memories", nil).WantStatus(http.StatusOK)
	if all.Body["count"] != 0.0 {
		t.Fatalf("another facilitator sees memories: %s", all.Raw)
	}
}

func TestMemoryContextRanksAndGroups(t *testing.T) {
	svc, dana, alex := apptest.StartWithLearner(t, apptest.Options{}, "Alex")
	for _, m := range []map[string]any{
		{"type": "academic", "content": "Confuses the discriminant with the leading coefficient", "importance": 0.6, "metadata": map[string]any{"topic": "quadratics", "emotion": "confused"}},
		{"type": "academic", "content": "A free throw arc made parabolas click", "importance": 0.8, "metadata": map[string]any{"topic": "quadratics", "valence": "positive"}},
		{"type": "academic", "content": "Solved completing the square on the first try", "importance": 0.5},
		{"type": "personal", "content": "Plays basketball; games are on Fridays", "importance": 0.5},
		{"type": "personal", "content": "Has a dog named Max", "importance": 0.9},
		{"type": "preference", "content": "Likes short explanations; long ones make Alex zone out", "importance": 0.7},
		{"type": "preference", "content": "When frustrated, pictures help more than letters", "importance": 0.8, "metadata": map[string]any{"category": "emotional_response", "trigger": "frustrated", "emotion": "frustrated"}},
		{"type": "context", "content": "Next: word problems with completing the square", "metadata": map[string]any{"next_topic": "word problems"}},
		{"type": "context", "content": "Ran out of time for completing the square"},
	} {
		svc.AddMemory(t, dana, alex, m)
	}

	recall := func(query string) apptest.Response {
		return svc.Call(t, dana.Token, http.MethodGet, "/api/memories/context?learner_id="+alex+"&"+query, nil).WantStatus(http.StatusOK)
	}
	// A message about the game brings the basketball memory first.
	res := recall("message=" + url.QueryEscape("we have a basketball game tonight"))
	personal := memoryContents(res.Body["personal"])
	if len(personal) == 0 || personal[0] != "Plays basketball; games are on Fridays" {
		t.Fatalf("basketball should rank first among personal memories: %v", personal)
	}
	// No session is live, so this opens one: besides what the message earns,
	// it brings the two most important memories of each type and the two
	// newest of continuity, not every memory (the third academic one, about
	// completing the square, is neither).
	if len(memoryContents(res.Body["academic"])) != 2 || len(memoryContents(res.Body["context"])) != 2 {
		t.Fatalf("a session's first message should bring two of each group: %s", res.Raw)
	}
	if ctx := memoryContents(res.Body["context"]); ctx[0] != "Ran out of time for completing the square" {
		t.Fatalf("context must be newest first: %v", ctx)
	}
	// Frustration is an emotional cue: deep retrieval, with the pattern.
	res = recall("message=" + url.QueryEscape("ugh I'm so frustrated with these letters"))
	retrieval := res.Body["retrieval"].(map[string]any)
	if retrieval["mode"] != "deep" {
		t.Fatalf("an emotional cue should run deep retrieval: %s", res.Raw)
	}
	patterns := memoryContents(res.Body["emotional_patterns"])
	if len(patterns) == 0 || patterns[0] != "When frustrated, pictures help more than letters" {
		t.Fatalf("want the frustration pattern, got %v", patterns)
	}
	// Filters follow the metadata.
	res = recall("message=parabola&type=academic&emotion=confused")
	if got := memoryContents(res.Body["academic"]); len(got) != 1 || got[0] != "Confuses the discriminant with the leading coefficient" {
		t.Fatalf("filter type=academic&emotion=confused gave %v", got)
	}
	if len(memoryContents(res.Body["personal"])) != 0 {
		t.Fatalf("type filter let other types through: %s", res.Raw)
	}
}
