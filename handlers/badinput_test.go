package handlers_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
)

// nothingStoredFor checks, after a refused request, that no conversation
// is stored and u has no learner.
func nothingStoredFor(svc *apptest.Service, u apptest.User) func(*testing.T, apptest.Response) {
	return func(t *testing.T, _ apptest.Response) {
		t.Helper()
		for _, table := range []string{"conversation_turns", "conversation_updates", "conversation_history_archive"} {
			if n := svc.Count(t, `select count(*) from `+table); n != 0 {
				t.Errorf("%s has %d rows after refused requests", table, n)
			}
		}
		if n := svc.Count(t, `select count(*) from learners where facilitator_id = $1::uuid`, u.ID); n != 0 {
			t.Errorf("refused requests created %d learners", n)
		}
	}
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	other := svc.NewUser(t)
	othersLearner := svc.NewLearner(t, other, "Not yours")
	turn := `{"role":"user","content":"hello"}`
	manyTurns := "[" + strings.TrimSuffix(strings.Repeat(turn+",", 501), ",") + "]"

	cases := []struct {
		name, method, path string
		body               string
		status             int
		message            string
	}{
		{"malformed JSON", "POST", "/api/conversation-memory", `{"conversation_turns": [`, 400, "Malformed JSON"},
		{"empty body", "POST", "/api/conversation-memory", ``, 400, "Request body required (JSON)"},
		{"null body", "POST", "/api/learners", `null`, 400, "Malformed JSON: the body must be an object"},
		{"trailing data", "POST", "/api/conversation-memory", `{"conversation_turns":[` + turn + `]} {}`, 400, "Malformed JSON: unexpected data after the object"},
		{"missing turns", "POST", "/api/conversation-memory", `{"learner_id": null}`, 400, "Conversation turns required"},
		{"empty turns", "POST", "/api/conversation-memory", `{"conversation_turns": []}`, 400, "Conversation turns required"},
		{"turns not a list", "POST", "/api/conversation-memory", `{"conversation_turns": "hi"}`, 400, "Malformed JSON: conversation_turns has the wrong type"},
		{"bad learner uuid", "POST", "/api/conversation-memory", `{"learner_id":"emma","conversation_turns":[` + turn + `]}`, 400, "learner_id must be a uuid"},
		{"learner id a number", "POST", "/api/conversation-memory", `{"learner_id":7,"conversation_turns":[` + turn + `]}`, 400, "learner_id must be a uuid or null"},
		{"unknown role", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"system","content":"x"}]}`, 400, `Turn 1: role must be "user" or "assistant"`},
		{"empty content", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"  "}]}`, 400, "Turn 1: content required"},
		{"content not text", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":["a"]}]}`, 400, "Malformed JSON: conversation_turns.content has the wrong type"},
		{"NUL in content", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"a\u0000b"}]}`, 400, "Turn content must not contain NUL characters"},
		{"escape in content", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"a\u001b[2Jb"}]}`, 400, "Turn content must not contain control characters (tab and line breaks are fine)"},
		{"invalid UTF-8 body", "POST", "/api/conversation-memory", "{\"conversation_turns\":[{\"role\":\"user\",\"content\":\"a\xffb\"}]}", 400, "Request body must be valid UTF-8"},
		{"right-to-left override in a name", "POST", "/api/learners", `{"name":"Emma\u202e"}`, 400, "Learner name must not contain control characters (tab and line breaks are fine)"},
		{"too many turns", "POST", "/api/conversation-memory", `{"conversation_turns":` + manyTurns + `}`, 400, "Too many conversation turns: at most 500 per request"},
		{"turn too long", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"` + strings.Repeat("a", 20_001) + `"}]}`, 400, "Turn 1: content too long (at most 20000 characters)"},
		{"turn id an object", "POST", "/api/conversation-memory", `{"conversation_turns":[{"id":{},"role":"user","content":"x"}]}`, 400, "Turn id must be a string or a number"},
		{"turn time not a time", "POST", "/api/conversation-memory", `{"conversation_turns":[` + turn + `,{"role":"assistant","content":"y","created_at":"yesterday"}]}`, 400, "Turn 2: created_at must be an RFC 3339 time, such as 2023-12-04T18:30:00Z"},
		{"turn time a date alone", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"x","created_at":"2023-12-04"}]}`, 400, "Turn 1: created_at must be an RFC 3339 time, such as 2023-12-04T18:30:00Z"},
		{"turn time a number", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"x","created_at":1701714600}]}`, 400, "Malformed JSON: conversation_turns.created_at has the wrong type"},
		{"turn time before 1970", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"x","created_at":"1969-07-20T20:17:00Z"}]}`, 400, "Turn 1: created_at 1969-07-20T20:17:00Z is before 1970"},
		{"body too large", "POST", "/api/conversation-memory", `{"conversation_turns":[{"role":"user","content":"` + strings.Repeat("a", 3<<20) + `"}]}`, 413, "Request body too large (at most 2097152 bytes)"},
		{"someone else's learner", "POST", "/api/conversation-memory", `{"learner_id":"` + othersLearner + `","conversation_turns":[` + turn + `]}`, 404, "Learner not found"},
		{"get with bad uuid", "GET", "/api/conversation-memory?learner_id=x", ``, 400, "learner_id must be a uuid"},
		{"get someone else's learner", "GET", "/api/conversation-memory?learner_id=" + othersLearner, ``, 404, "Learner not found"},
		{"delete someone else's learner", "DELETE", "/api/conversation-memory?learner_id=" + othersLearner, ``, 404, "Learner not found"},
		{"empty search", "GET", "/api/conversation-memory?search=", ``, 400, "Search text required"},
		{"search too long", "GET", "/api/conversation-memory?search=" + strings.Repeat("a", 501), ``, 400, "Search text too long (at most 500 characters)"},
		{"search limit zero", "GET", "/api/conversation-memory?search=x&limit=0", ``, 400, "limit must be between 1 and 100"},
		{"search limit too big", "GET", "/api/conversation-memory?search=x&limit=101", ``, 400, "limit must be between 1 and 100"},
		{"search limit not a number", "GET", "/api/conversation-memory?search=x&limit=ten", ``, 400, "limit must be a whole number"},
		{"include_archive not a bool", "GET", "/api/conversation-memory?search=x&include_archive=maybe", ``, 400, "include_archive must be true or false"},
		{"search NUL", "GET", "/api/conversation-memory?search=a%00b", ``, 400, "Search text must not contain NUL characters"},
		{"search invalid UTF-8", "GET", "/api/conversation-memory?search=a%ffb", ``, 400, "Search text must be valid UTF-8"},
		{"archive id not a uuid", "GET", "/api/archives/x", ``, 400, "archive id must be a uuid"},
		{"archive page of none", "GET", "/api/archives/00000000-0000-0000-0000-000000000001?limit=0", ``, 400, "limit must be between 1 and 500"},
		{"archive offset negative", "GET", "/api/archives/00000000-0000-0000-0000-000000000001?offset=-1", ``, 400, "offset must be between 0 and 100000"},
		{"no such archive", "GET", "/api/archives/00000000-0000-0000-0000-000000000001", ``, 404, "Archived conversation not found"},
		{"learner without name", "POST", "/api/learners", `{"name":" "}`, 400, "Learner name required"},
		{"learner name too long", "POST", "/api/learners", `{"name":"` + strings.Repeat("n", 101) + `"}`, 400, "Learner name too long (at most 100 characters)"},
		{"unknown route", "GET", "/api/nothing-here", ``, 404, "Not found"},
		{"wrong method", "PUT", "/api/conversation-memory", ``, 405, "Method not allowed"},
	}
	for _, tc := range cases {
		apptest.Scenario{
			Name: tc.name, Method: tc.method, Path: tc.path, Token: u.Token, Body: tc.body,
			WantStatus: tc.status, WantError: tc.message, Check: nothingStoredFor(svc, u),
		}.Run(t, svc)
	}
}

func TestAuthentication(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	noTurnStored := func(t *testing.T, _ apptest.Response) {
		if n := svc.Count(t, `select count(*) from conversation_turns`); n != 0 {
			t.Fatalf("an unauthenticated post stored %d turns", n)
		}
	}
	for _, sc := range []apptest.Scenario{
		{Name: "no token", Method: http.MethodGet, Path: "/api/conversation-memory", WantStatus: 401, WantError: "Authentication required"},
		{Name: "not a JWT", Method: http.MethodGet, Path: "/api/conversation-memory", Token: "not-a-jwt", WantStatus: 401, WantError: "Invalid authentication"},
		{Name: "post without a token", Method: http.MethodPost, Path: "/api/conversation-memory", Body: `{"conversation_turns":[{"role":"user","content":"x"}]}`,
			WantStatus: 401, WantError: "Authentication required", Check: noTurnStored},
		{Name: "health without a token", Method: http.MethodGet, Path: "/healthz", WantStatus: http.StatusOK},
	} {
		sc.Run(t, svc)
	}
}

func TestFacilitatorsCannotSeeEachOther(t *testing.T) {
	svc, a, aLearner := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	b := svc.NewUser(t)
	svc.PostTurns(t, a, aLearner, apptest.Exchange("Emma loves dinosaurs and the word brontosaurus.", "Use dinosaurs for counting.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, a, "", apptest.Exchange("General planning about brontosaurus week.", "Plan it on Monday.")...).WantStatus(http.StatusOK)

	if got := svc.Call(t, b.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK); got.Body["conversation_update"] != nil {
		t.Fatalf("B sees A's general memory: %s", got.Raw)
	}
	learners := svc.Call(t, b.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	if len(learners.Body["learners"].([]any)) != 0 {
		t.Fatalf("B sees A's learners: %s", learners.Raw)
	}
	found := svc.Call(t, b.Token, http.MethodGet, "/api/conversation-memory?search=brontosaurus&include_archive=true", nil).WantStatus(http.StatusOK)
	if found.Body["count"] != 0.0 {
		t.Fatalf("B finds A's conversations: %s", found.Raw)
	}
	// B's clear of the general conversation is B's own, and leaves A's alone.
	svc.Call(t, b.Token, http.MethodDelete, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	got := svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	if number(got.Object("conversation_update")["turn_count"]) != 2 {
		t.Fatalf("A's memory changed: %s", got.Raw)
	}
	found = svc.Call(t, a.Token, http.MethodGet, "/api/conversation-memory?search=brontosaurus", nil).WantStatus(http.StatusOK)
	if found.Body["count"] != 2.0 {
		t.Fatalf("A should find both conversations: %s", found.Raw)
	}
}

// Every operation of the API's document is sent what a careless or hostile
// client sends: ids that are not ids, query values that are not what the
// parameter takes, bodies that are not JSON, not objects, or whose fields
// have every wrong type. Each answer is a 2xx or the API's 4xx error,
// never a 5xx and never a hang-up, and it stays within the document
// (apptest's contract check). The hand-written tests of each route check
// the messages; this one covers what no one thought to write.
func TestEveryRouteAnswersHostileInputWithoutA5xx(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Try counting blocks together.", "stop"))
	svc, u, learner := apptest.StartWithLearner(t, apptest.Options{
		ModelURL: model.URL,
		Web:      config.Web{CronSecret: "cron-secret", MetricsToken: "metrics-token"},
	}, "Emma")
	memory := svc.AddMemory(t, u, learner, map[string]any{"type": "academic", "content": "Emma counts to twenty"})
	// An id of each kind that the caller holds, so that a variant of the
	// query or the body reaches past the lookup of the path's id.
	ownIDs := map[string]string{"/api/learners/": learner, "/api/memories/": memory}
	bodies := validBodies(learner)

	// A request the server holds without answering fails the test rather
	// than stalling it.
	client := apptest.Client{URL: svc.URL, HTTP: &http.Client{Timeout: time.Minute}}
	sent := 0
	for path, item := range apptest.Contract(t).Paths.Map() {
		for method, op := range item.Operations() {
			for _, r := range hostileRequests(path, op, ownIDs, bodies[method+" "+path]) {
				sent++
				answer := client.Do(t, apptest.Request{Method: method, Path: r.path, Token: u.Token, Header: r.header, Body: r.body})
				checkNo5xx(t, method, path, r, answer)
			}
		}
	}
	t.Logf("%d hostile requests", sent)
	if sent < 500 {
		t.Errorf("only %d hostile requests sent; the document's operations were not read", sent)
	}
}

// hostileRequest is one request of the sweep: the path with its query, the
// headers beside the token, and the body (nil: none).
type hostileRequest struct {
	what   string
	path   string
	header http.Header
	body   any
}

// checkNo5xx fails unless the answer is a 2xx (which need not be JSON:
// the export's lines), or a 4xx with the API's error object (the MCP
// endpoint answers in its protocol's terms instead).
func checkNo5xx(t *testing.T, method, path string, r hostileRequest, answer apptest.Response) {
	t.Helper()
	where := fmt.Sprintf("%s %s with %s", method, path, r.what)
	switch {
	case answer.Status == 0:
		t.Errorf("%s: no answer: %v", where, answer.Err)
	case answer.Status >= 500:
		t.Errorf("%s: %d %s", where, answer.Status, answer.Raw)
	case answer.Status >= 400 && path != "/mcp":
		if answer.Err != nil || answer.Body["success"] != false || answer.Body["error"] == "" || answer.Body["error"] == nil {
			t.Errorf("%s: %d without the API's error object: %s", where, answer.Status, answer.Raw)
		}
	}
}

// hostileRequests are the sweep's requests for one operation: each path,
// query and header parameter, and the body, spoilt one at a time; valid,
// when the operation takes a body, is one it accepts, whose every value at
// every depth is spoilt in turn.
func hostileRequests(path string, op *openapi3.Operation, ownIDs map[string]string, valid any) []hostileRequest {
	// The path with each parameter an id the caller holds (or one nobody
	// does), for the variants of the query and the body.
	validPath := path
	for prefix, id := range ownIDs {
		if strings.HasPrefix(path, prefix+"{id}") {
			validPath = strings.Replace(path, "{id}", id, 1)
		}
	}
	validPath = strings.ReplaceAll(validPath, "{id}", "00000000-0000-4000-8000-000000000001")

	var out []hostileRequest
	if strings.Contains(path, "{id}") {
		for _, id := range []string{"not-an-id", "%00", "%ff", strings.Repeat("9", 2000), "00000000-0000-4000-8000-000000000002"} {
			out = append(out, hostileRequest{what: "id " + short(id), path: strings.ReplaceAll(path, "{id}", id)})
		}
	}
	for _, p := range op.Parameters {
		if p.Value == nil {
			continue
		}
		name := p.Value.Name
		switch p.Value.In {
		case "query":
			for _, v := range []string{"", "x", "-1", "0", "1.5", "99999999999999999999", "%00", "%ff", "null",
				strings.Repeat("a", 10_000), "2023-02-30", "9999-12-31T99:99:99Z"} {
				out = append(out, hostileRequest{
					what: fmt.Sprintf("%s=%s", name, short(v)),
					path: validPath + "?" + name + "=" + strings.ReplaceAll(url.PathEscape(v), "%25", "%"),
				})
			}
		case "header":
			for _, v := range []string{"x", "-1", "99999999999999999999", "0/0", strings.Repeat("a", 4_000), "\x80\xff"} {
				out = append(out, hostileRequest{
					what:   fmt.Sprintf("header %s: %s", name, short(v)),
					path:   validPath,
					header: http.Header{name: {v}},
				})
			}
		}
	}
	if op.RequestBody == nil {
		return out
	}
	for _, body := range []string{"", "null", "[]", "{}", "{", `"text"`, "1", "true", "{} {}", "\xff\xfe",
		strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)} {
		out = append(out, hostileRequest{what: "body " + short(body), path: validPath, body: body})
	}
	wrong := []any{nil, -1, 1e300, 0.5, "", "x", strings.Repeat("a", 100_000), "\u0000", true,
		[]any{}, []any{"x", 1, nil}, map[string]any{}, map[string]any{"x": []any{1}}}
	for _, field := range bodyFields(op) {
		for _, v := range wrong {
			out = append(out, hostileRequest{
				what: fmt.Sprintf("body {%q: %s}", field, short(fmt.Sprint(v))),
				path: validPath,
				body: map[string]any{field: v},
			})
		}
	}
	if valid != nil {
		for _, at := range valuePaths(valid, "") {
			for _, v := range wrong {
				out = append(out, hostileRequest{
					what: fmt.Sprintf("a valid body with %s = %s", at.where, short(fmt.Sprint(v))),
					path: validPath,
					body: replaced(valid, at.steps, v),
				})
			}
		}
	}
	return out
}

// validBodies are bodies the operations that take JSON accept, by method
// and path: the sweep spoils them one value at a time, so that a wrong
// value meets the checks behind those of the fields before it. (The MCP
// endpoint and the import take other protocols and formats.)
func validBodies(learner string) map[string]any {
	turns := []any{
		map[string]any{"id": "t1", "role": "user", "content": "Emma counted to twenty.", "created_at": "2026-11-20T17:00:00Z"},
		map[string]any{"id": "t2", "role": "assistant", "content": "Count the stairs with her next."},
	}
	return map[string]any{
		"POST /api/conversation-memory":   map[string]any{"learner_id": learner, "conversation_turns": turns, "force_regenerate": false},
		"POST /api/learners":              map[string]any{"name": "Max"},
		"PATCH /api/learners/{id}":        map[string]any{"name": "Emma"},
		"PUT /api/learners/{id}/profile":  map[string]any{"lines": []any{map[string]any{"category": "strengths", "text": "Counts well"}}},
		"PUT /api/learners/{id}/settings": map[string]any{"learning": true},
		"PUT /api/account/settings":       map[string]any{"learning": true, "retention_days": 365},
		"POST /api/memories": map[string]any{"learner_id": learner, "type": "academic", "content": "Emma counts to thirty",
			"importance": 0.5, "confidence": 0.9, "metadata": map[string]any{"emotion": "proud"}},
		"PATCH /api/memories/{id}": map[string]any{"content": "Emma counts to forty", "importance": 0.6, "confidence": 0.8,
			"metadata": map[string]any{"emotion": "calm"}, "confirm": true},
		"POST /api/sessions/end": map[string]any{"learner_id": learner},
		"POST /api/tools/call": map[string]any{"name": "recall_learner_memories",
			"arguments": map[string]any{"learner_id": learner, "about": "counting"}},
		"POST /api/counselor": map[string]any{"message": "How can I help Emma count?", "learner_id": learner,
			"history": []any{map[string]any{"role": "user", "content": "Emma counted to twenty."},
				map[string]any{"role": "assistant", "content": "Count the stairs with her next."}},
			"time_zone": "Europe/London"},
	}
}

// valuePath is where a value stands in a body: the keys and indexes that
// lead to it, and the same written out.
type valuePath struct {
	steps []any
	where string
}

// valuePaths are the places of every value of body, at every depth (an
// array by its first item).
func valuePaths(body any, where string) []valuePath {
	var out []valuePath
	switch b := body.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(b)) {
			at := where + "." + k
			out = append(out, valuePath{steps: []any{k}, where: at})
			for _, inner := range valuePaths(b[k], at) {
				out = append(out, valuePath{steps: append([]any{k}, inner.steps...), where: inner.where})
			}
		}
	case []any:
		if len(b) > 0 {
			at := where + "[0]"
			out = append(out, valuePath{steps: []any{0}, where: at})
			for _, inner := range valuePaths(b[0], at) {
				out = append(out, valuePath{steps: append([]any{0}, inner.steps...), where: inner.where})
			}
		}
	}
	return out
}

// replaced is body with the value at steps replaced by v; body itself is
// left as it was.
func replaced(body any, steps []any, v any) any {
	if len(steps) == 0 {
		return v
	}
	switch b := body.(type) {
	case map[string]any:
		out := maps.Clone(b)
		k := steps[0].(string)
		out[k] = replaced(b[k], steps[1:], v)
		return out
	case []any:
		out := slices.Clone(b)
		i := steps[0].(int)
		out[i] = replaced(b[i], steps[1:], v)
		return out
	}
	return body
}

// bodyFields are the names of the top-level fields of the operation's JSON
// body, as its document describes them.
func bodyFields(op *openapi3.Operation) []string {
	var fields []string
	for _, media := range op.RequestBody.Value.Content {
		if media.Schema == nil || media.Schema.Value == nil {
			continue
		}
		schemas := append([]*openapi3.SchemaRef{media.Schema}, media.Schema.Value.OneOf...)
		schemas = append(schemas, media.Schema.Value.AllOf...)
		for _, s := range schemas {
			if s.Value == nil {
				continue
			}
			for name := range s.Value.Properties {
				if !slices.Contains(fields, name) {
					fields = append(fields, name)
				}
			}
		}
	}
	slices.Sort(fields)
	return fields
}

// short is v cut for a test's message.
func short(v string) string {
	if len(v) > 24 {
		return fmt.Sprintf("%q… (%d bytes)", v[:24], len(v))
	}
	return fmt.Sprintf("%q", v)
}
