package handlers_test

import (
	"net/http"
	"net/url"
	"testing"

	"mentormemory/app/apptest"
)

// addMemory stores a memory through the API and returns its id.
func (e *env) addMemory(u user, learnerID string, body map[string]any) string {
	e.t.Helper()
	body["learner_id"] = learnerID
	res := e.call(u.token, http.MethodPost, "/api/memories", body).wantStatus(http.StatusCreated)
	return res.body["memory"].(map[string]any)["id"].(string)
}

func memoryContents(group any) []string {
	var out []string
	for _, m := range group.([]any) {
		out = append(out, m.(map[string]any)["content"].(string))
	}
	return out
}

func TestMemoriesAddCorrectForget(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	dana := e.newUser()
	max := e.newLearner(dana, "Max")

	id := e.addMemory(dana, max, map[string]any{
		"type": "personal", "content": "Max has a dog called Biscuit",
		"metadata": map[string]any{"topic": "pets", "emotion": "Excited"},
	})
	list := e.call(dana.token, http.MethodGet, "/api/memories?learner_id="+max, nil).wantStatus(http.StatusOK)
	got := list.body["memories"].([]any)
	if len(got) != 1 {
		t.Fatalf("want 1 memory, got %s", list.raw)
	}
	m := got[0].(map[string]any)
	if m["source"] != "added" || m["confidence"] != 1.0 || m["importance"] != 0.5 || m["mentions"] != 1.0 {
		t.Fatalf("defaults or source wrong: %s", list.raw)
	}
	if m["metadata"].(map[string]any)["emotion"] != "excited" {
		t.Fatalf("emotion should be stored in lower case: %s", list.raw)
	}

	// Saying it again reinforces the memory instead of storing a copy.
	again := e.call(dana.token, http.MethodPost, "/api/memories", map[string]any{
		"learner_id": max, "type": "personal", "content": "Max has a dog called Biscuit!", "confidence": 0.8, "importance": 0.6,
	}).wantStatus(http.StatusOK)
	merged := again.body["memory"].(map[string]any)
	if again.body["merged"] != true || merged["id"] != id || merged["mentions"] != 2.0 || merged["importance"].(float64) <= 0.6 {
		t.Fatalf("repeat should merge into %s and raise importance: %s", id, again.raw)
	}
	if n := e.count(`select count(*) from learner_memories where learner_id = $1::uuid`, max); n != 1 {
		t.Fatalf("want 1 stored memory after the repeat, got %d", n)
	}

	fixed := e.call(dana.token, http.MethodPatch, "/api/memories/"+id, map[string]any{"content": "Max has a cat called Biscuit"}).
		wantStatus(http.StatusOK)
	if fixed.body["memory"].(map[string]any)["content"] != "Max has a cat called Biscuit" {
		t.Fatalf("correction not applied: %s", fixed.raw)
	}
	e.call(dana.token, http.MethodPatch, "/api/memories/"+id, map[string]any{}).
		wantError(http.StatusBadRequest, "Nothing to change: send type, content, importance, confidence or metadata")
	e.call(dana.token, http.MethodPatch, "/api/memories/"+id, map[string]any{"importance": 2}).
		wantError(http.StatusBadRequest, "importance must be between 0 and 1")

	e.call(dana.token, http.MethodDelete, "/api/memories/"+id, nil).wantStatus(http.StatusOK)
	e.call(dana.token, http.MethodDelete, "/api/memories/"+id, nil).wantError(http.StatusNotFound, "Memory not found")
	if n := e.count(`select count(*) from learner_memories`); n != 0 {
		t.Fatalf("forgotten memory still stored")
	}
}

func TestMemoriesBadInput(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	dana := e.newUser()
	emma := e.newLearner(dana, "Emma")
	cases := []struct {
		name string
		body any
		want string
	}{
		{"unknown type", map[string]any{"learner_id": emma, "type": "secret", "content": "x"}, "type must be one of academic, personal, preference, context"},
		{"no content", map[string]any{"learner_id": emma, "type": "academic", "content": "  "}, "Memory content required"},
		{"confidence out of range", map[string]any{"learner_id": emma, "type": "academic", "content": "x", "confidence": -0.1}, "confidence must be between 0 and 1"},
		{"nested metadata", map[string]any{"learner_id": emma, "type": "academic", "content": "x", "metadata": map[string]any{"topic": map[string]any{}}}, "metadata topic must be a string, a number or a boolean"},
		{"bad metadata key", map[string]any{"learner_id": emma, "type": "academic", "content": "x", "metadata": map[string]any{"Bad Key": "v"}}, `metadata key "Bad Key" must be lower-case letters, digits and _ (at most 40 characters)`},
		{"bad learner", map[string]any{"learner_id": "nope", "type": "academic", "content": "x"}, "learner_id must be a uuid"},
		{"NUL", map[string]any{"learner_id": emma, "type": "academic", "content": "a\u0000b"}, "Memory content must not contain NUL characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.call(dana.token, http.MethodPost, "/api/memories", c.body).wantError(http.StatusBadRequest, c.want)
		})
	}
	e.call(dana.token, http.MethodPatch, "/api/memories/not-a-uuid", map[string]any{"content": "x"}).
		wantError(http.StatusBadRequest, "memory id must be a uuid")
	e.call(dana.token, http.MethodGet, "/api/memories?type=secret", nil).
		wantError(http.StatusBadRequest, "type must be one of academic, personal, preference, context")
	if n := e.count(`select count(*) from learner_memories`); n != 0 {
		t.Fatalf("bad input stored %d memories", n)
	}
}

func TestMemoriesAreIsolated(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	dana, other := e.newUser(), e.newUser()
	emma := e.newLearner(dana, "Emma")
	id := e.addMemory(dana, emma, map[string]any{"type": "academic", "content": "Emma struggles with fractions"})

	e.call(other.token, http.MethodGet, "/api/memories?learner_id="+emma, nil).wantError(http.StatusNotFound, "Learner not found")
	e.call(other.token, http.MethodGet, "/api/memories/context?learner_id="+emma+"&message=fractions", nil).wantError(http.StatusNotFound, "Learner not found")
	e.call(other.token, http.MethodPost, "/api/memories", map[string]any{"learner_id": emma, "type": "academic", "content": "x"}).
		wantError(http.StatusNotFound, "Learner not found")
	e.call(other.token, http.MethodPatch, "/api/memories/"+id, map[string]any{"content": "changed"}).wantError(http.StatusNotFound, "Memory not found")
	e.call(other.token, http.MethodDelete, "/api/memories/"+id, nil).wantError(http.StatusNotFound, "Memory not found")
	all := e.call(other.token, http.MethodGet, "/api/memories", nil).wantStatus(http.StatusOK)
	if all.body["count"] != 0.0 {
		t.Fatalf("another facilitator sees memories: %s", all.raw)
	}
	if n := e.count(`select count(*) from learner_memories where id = $1::uuid and content = 'Emma struggles with fractions'`, id); n != 1 {
		t.Fatal("the owner's memory changed")
	}
}

func TestMemoryContextRanksAndGroups(t *testing.T) {
	e := newEnv(t, apptest.Options{})
	dana := e.newUser()
	alex := e.newLearner(dana, "Alex")
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
		e.addMemory(dana, alex, m)
	}

	recall := func(query string) response {
		return e.call(dana.token, http.MethodGet, "/api/memories/context?learner_id="+alex+"&"+query, nil).wantStatus(http.StatusOK)
	}
	// A message about the game brings the basketball memory first.
	res := recall("message=" + url.QueryEscape("we have a basketball game tonight"))
	personal := memoryContents(res.body["personal"])
	if len(personal) == 0 || personal[0] != "Plays basketball; games are on Fridays" {
		t.Fatalf("basketball should rank first among personal memories: %v", personal)
	}
	if len(memoryContents(res.body["academic"])) != 3 || len(memoryContents(res.body["context"])) != 2 {
		t.Fatalf("groups incomplete: %s", res.raw)
	}
	if ctx := memoryContents(res.body["context"]); ctx[0] != "Ran out of time for completing the square" {
		t.Fatalf("context must be newest first: %v", ctx)
	}
	// Frustration is an emotional cue: deep retrieval, with the pattern.
	res = recall("message=" + url.QueryEscape("ugh I'm so frustrated with these letters"))
	retrieval := res.body["retrieval"].(map[string]any)
	if retrieval["mode"] != "deep" {
		t.Fatalf("an emotional cue should run deep retrieval: %s", res.raw)
	}
	patterns := memoryContents(res.body["emotional_patterns"])
	if len(patterns) == 0 || patterns[0] != "When frustrated, pictures help more than letters" {
		t.Fatalf("want the frustration pattern, got %v", patterns)
	}
	// Filters follow the metadata.
	res = recall("message=parabola&type=academic&emotion=confused")
	if got := memoryContents(res.body["academic"]); len(got) != 1 || got[0] != "Confuses the discriminant with the leading coefficient" {
		t.Fatalf("filter type=academic&emotion=confused gave %v", got)
	}
	if len(memoryContents(res.body["personal"])) != 0 {
		t.Fatalf("type filter let other types through: %s", res.raw)
	}
}
