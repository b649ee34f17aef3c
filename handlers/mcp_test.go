package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/mentor"
)

// mcpResult is a successful tool result's JSON, decoded: its text, which
// must be the same JSON as its structured content.
func mcpResult(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", apptest.MCPText(res))
	}
	var fromText, structured map[string]any
	if err := json.Unmarshal([]byte(apptest.MCPText(res)), &fromText); err != nil {
		t.Fatalf("the result's text is not a JSON object: %v: %s", err, apptest.MCPText(res))
	}
	if err := remarshal(res.StructuredContent, &structured); err != nil || !reflect.DeepEqual(fromText, structured) {
		t.Fatalf("structured content %v differs from the text %v (%v)", res.StructuredContent, fromText, err)
	}
	return fromText
}

// wantToolError checks that a tool call failed as a tool error result
// carrying the API's message.
func wantToolError(t *testing.T, res *mcp.CallToolResult, message string) {
	t.Helper()
	if !res.IsError || apptest.MCPText(res) != message {
		t.Fatalf("result (error %v) %q, want the tool error %q", res.IsError, apptest.MCPText(res), message)
	}
}

// remarshal decodes v's JSON into dst.
func remarshal(v any, dst any) error {
	encoded, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(encoded, dst)
}

// An MCP client, the SDK's own, lists the same tools as GET /api/tools
// (names, descriptions, input schemas), and its calls of a read tool and a
// search tool answer exactly what POST /api/tools/call answers.
func TestMCPServesTheAPIsTools(t *testing.T) {
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	svc.PostTurns(t, a, emma, apptest.Exchange("Emma got stuck on fractions again.", "Try pizza slices: halves, then quarters.")...).WantStatus(http.StatusOK)
	svc.PostTurns(t, a, "", apptest.Exchange("Our reading routine slipped this week.", "Ten minutes after dinner is plenty.")...).WantStatus(http.StatusOK)
	session := svc.MCP(t, a.Token)

	listed, err := session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var overMCP []map[string]any
	for _, tool := range listed.Tools {
		overMCP = append(overMCP, map[string]any{"name": tool.Name, "description": tool.Description, "parameters": tool.InputSchema})
	}
	var api []map[string]any
	for _, tool := range svc.Call(t, a.Token, http.MethodGet, "/api/tools", nil).WantStatus(http.StatusOK).Body["tools"].([]any) {
		api = append(api, tool.(map[string]any)["function"].(map[string]any))
	}
	for _, f := range api {
		delete(f, "strict") // OpenAI's flag; MCP has none
	}
	var got, want []map[string]any
	if err := remarshal(overMCP, &got); err != nil {
		t.Fatal(err)
	}
	if err := remarshal(api, &want); err != nil {
		t.Fatal(err)
	}
	// The SDK lists tools by name.
	slices.SortFunc(want, func(x, y map[string]any) int { return strings.Compare(x["name"].(string), y["name"].(string)) })
	if len(got) != 8 || !reflect.DeepEqual(got, want) {
		t.Fatalf("MCP lists\n%v\nGET /api/tools lists\n%v", got, want)
	}

	for _, call := range []plannedCall{
		{"get_conversation_memory", `{"learner_id":"` + emma + `"}`},
		{"get_conversation_memory", `{"learner_id":null}`},
		{"search_conversation_history", `{"search":"fractions pizza","include_archive":null}`},
		{"search_conversation_history", `{"search":"reading routine","include_archive":false}`},
	} {
		result := mcpResult(t, apptest.CallMCP(t, session, call.name, call.arguments))
		api := svc.Call(t, a.Token, http.MethodPost, "/api/tools/call", toolCall(call.name, call.arguments)).WantStatus(http.StatusOK)
		if !reflect.DeepEqual(result, api.Body) {
			t.Errorf("%s(%s) over MCP:\n%v\nthrough the API:\n%v", call.name, call.arguments, result, api.Body)
		}
		if result["success"] != true || (result["has_memory"] != true && result["count"] != 1.0) {
			t.Errorf("%s(%s) found nothing: %v", call.name, call.arguments, result)
		}
	}
}

// mcpInitialize is an MCP client's first request, as a client without the
// SDK sends it.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// mcpHeaders are the headers the streamable HTTP transport asks of a POST.
func mcpHeaders() http.Header {
	return http.Header{"Accept": {"application/json, text/event-stream"}}
}

// Without a token, or with one the API refuses, /mcp answers the API's own
// 401 before the MCP endpoint reads anything, whatever the method, and the
// SDK's client cannot connect.
func TestMCPNeedsTheFacilitatorsToken(t *testing.T) {
	svc, a := apptest.StartWithUser(t, apptest.Options{})
	forged, err := auth.MintHS256(strings.Repeat("not the project's secret ", 2), a.ID, a.Email, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	basic := mcpHeaders()
	basic.Set("Authorization", "Basic "+a.Token)
	for _, sc := range []apptest.Scenario{
		{Name: "no token", WantError: "Authentication required"},
		{Name: "no token, GET", Method: http.MethodGet, WantError: "Authentication required"},
		{Name: "no token, DELETE", Method: http.MethodDelete, WantError: "Authentication required"},
		{Name: "not a bearer token", Header: basic, WantError: "Invalid authentication"},
		{Name: "not a token", Token: "not-a-token", WantError: "Invalid authentication"},
		{Name: "signed with another secret", Token: forged, WantError: "Invalid authentication"},
	} {
		if sc.Method == "" {
			sc.Method, sc.Body = http.MethodPost, mcpInitialize
		}
		if sc.Header == nil {
			sc.Header = mcpHeaders()
		}
		sc.Path, sc.WantStatus = "/mcp", http.StatusUnauthorized
		sc.Run(t, svc)
	}
	for _, token := range []string{"", "not-a-token", forged} {
		if session, err := svc.ConnectMCP(token); err == nil {
			session.Close()
			t.Errorf("the MCP client connected with the token %q", token)
		}
	}
	// With the token, the methods a stateless server has no use for are
	// the SDK's 405, after auth.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: method, Path: "/mcp", Token: a.Token, Header: mcpHeaders()})
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
			t.Errorf("%s /mcp with a token: %d, Allow %q; want 405, Allow POST", method, r.Status, r.Header.Get("Allow"))
		}
	}
}

// The destructive tools over MCP change nothing: each answers a pending
// action, as in the chat. The facilitator's confirmation through the API
// then applies it, recorded as made from the chat.
func TestMCPDestructiveToolsWaitForTheFacilitator(t *testing.T) {
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	storms := svc.AddMemory(t, a, emma, map[string]any{"type": "personal", "content": "Emma is scared of thunderstorms"})
	horses := svc.AddMemory(t, a, emma, map[string]any{"type": "personal", "content": "Emma loves drawing horses"})
	session := svc.MCP(t, a.Token)
	before := memoryState(t, svc, a.ID)

	var actions []map[string]any
	for _, call := range []plannedCall{
		{"forget_memory", `{"memory_id":"` + storms + `"}`},
		{"correct_memory", `{"memory_id":"` + horses + `","content":"Emma loves drawing dogs"}`},
	} {
		result := mcpResult(t, apptest.CallMCP(t, session, call.name, call.arguments))
		action, ok := result["pending_action"].(map[string]any)
		if !ok || action["status"] != "pending" {
			t.Fatalf("%s answered %v, want a pending action", call.name, result)
		}
		actions = append(actions, action)
	}
	if after := memoryState(t, svc, a.ID); after != before {
		t.Fatalf("a destructive tool over MCP changed memory before any confirmation:\nbefore %s\nafter  %s", before, after)
	}

	for _, action := range actions {
		confirmed := svc.Call(t, a.Token, http.MethodPost, actionPath(action["id"].(string), "confirm"), nil).WantStatus(http.StatusOK)
		if confirmed.Object("action")["status"] != "confirmed" {
			t.Errorf("confirming %s answered %s", action["kind"], confirmed.Raw)
		}
	}
	if n := svc.Count(t, `select count(*) from public.learner_memories where id = $1::uuid`, storms); n != 0 {
		t.Errorf("the forgotten memory is still stored")
	}
	if got := apptest.Scalar[string](t, svc.Pool, `select content from public.learner_memories where id = $1::uuid`, horses); got != "Emma loves drawing dogs" {
		t.Errorf("the corrected memory says %q", got)
	}
	if history := historyOf(t, svc, horses); !slices.Contains(history, "corrected by chat: Emma loves drawing horses -> Emma loves drawing dogs") {
		t.Errorf("the correction's history: %q", history)
	}
}

// Bad input over MCP is never a 500 and changes nothing: an unknown tool is
// a JSON-RPC error; arguments that break a tool's schema are a tool error
// with the message POST /api/tools/call gives; a request the transport
// cannot read is a 4xx.
func TestMCPBadInputIsRefusedAndChangesNothing(t *testing.T) {
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	memoryID := svc.AddMemory(t, a, emma, map[string]any{"type": "personal", "content": "Emma is scared of thunderstorms"})
	svc.PostTurns(t, a, emma, apptest.Exchange("Emma's thunderstorm fears came back.", "Let's plan a calm-down corner.")...).WantStatus(http.StatusOK)
	session := svc.MCP(t, a.Token)
	before := snapshotOf(t, svc, a.ID)

	_, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "forget_everything", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("an unknown tool answered %v, want a JSON-RPC invalid-params error", err)
	}

	for _, call := range []plannedCall{
		{"forget_memory", `{}`},
		{"forget_memory", `null`},
		{"forget_memory", `["` + memoryID + `"]`},
		{"forget_memory", `{"memory_id":"` + memoryID + `","and_also":"everything else"}`},
		{"forget_memory", `{"memory_id":"not-a-uuid"}`},
		{"correct_memory", `{"memory_id":"` + memoryID + `","content":42}`},
		{"correct_memory", `{"memory_id":"` + memoryID + `","content":"` + strings.Repeat("long ", 300) + `"}`},
		{"forget_topic", `{"learner_id":"` + emma + `","topic":""}`},
		{"forget_topic", `{"learner_id":"not-a-uuid","topic":"storms"}`},
		{"get_conversation_memory", `{"learner_id":"` + emma + `","search":"x"}`},
		{"search_conversation_history", `{"search":"storms","include_archive":"yes"}`},
		{"recall_learner_memories", `{"learner_id":"` + emma + `","about":"storms","type":"secrets","emotion":null}`},
	} {
		api := svc.Call(t, a.Token, http.MethodPost, "/api/tools/call", toolCall(call.name, call.arguments))
		if api.Status != http.StatusBadRequest && api.Status != http.StatusNotFound {
			t.Errorf("%s(%s) through the API: %s, want a 400 or 404", call.name, call.arguments, api)
			continue
		}
		wantToolError(t, apptest.CallMCP(t, session, call.name, call.arguments), api.Body["error"].(string))
	}

	tooLarge := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_conversation_history","arguments":{"search":"` +
		strings.Repeat("x", 3<<20) + `","include_archive":null}}}`
	plainJSON := mcpHeaders()
	plainJSON.Set("Accept", "application/json")
	// The transport's own refusals are plain text, as MCP clients expect.
	for _, bad := range []struct {
		name       string
		header     http.Header
		body       string
		wantStatus int
	}{
		{"not JSON", mcpHeaders(), `{"jsonrpc":"2.0","id":2,"method":`, http.StatusBadRequest},
		{"not JSON-RPC", mcpHeaders(), `{"name":"forget_memory","arguments":{"memory_id":"` + memoryID + `"}}`, http.StatusBadRequest},
		{"no such method", mcpHeaders(), `{"jsonrpc":"2.0","id":2,"method":"memory/erase","params":{}}`, http.StatusBadRequest},
		{"event stream not accepted", plainJSON, mcpInitialize, http.StatusBadRequest},
		{"body over the limit", mcpHeaders(), tooLarge, http.StatusRequestEntityTooLarge},
	} {
		r := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/mcp", Token: a.Token, Header: bad.header, Body: bad.body})
		if r.Status != bad.wantStatus {
			t.Errorf("%s: %s, want status %d", bad.name, r, bad.wantStatus)
		}
	}

	if after := snapshotOf(t, svc, a.ID); after != before {
		t.Fatalf("bad input over MCP changed the facilitator's data:\nbefore %s\nafter  %s", before, after)
	}
}

// Each tool call over MCP is a mentor request, on the same budget a minute
// as POST /api/tools/call, even when one POST carries a batch of them;
// initializing and listing the tools cost nothing. Past the limit a call
// is a tool error saying when to try again.
func TestMCPToolCallsAreMentorRequests(t *testing.T) {
	svc, a := apptest.StartWithUser(t, apptest.Options{Limits: mentor.Limits{ModelRequestsPerMinute: 3}})
	session := svc.MCP(t, a.Token)
	used := func() int64 { return apptest.Used(t, svc.Pool, a.ID, mentor.ModelRequests) }
	memory := plannedCall{"get_conversation_memory", `{"learner_id":null}`}

	for range 2 {
		if _, err := session.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if used() != 0 {
		t.Fatalf("listing the tools counted %d mentor requests", used())
	}
	mcpResult(t, apptest.CallMCP(t, session, memory.name, memory.arguments))
	mcpResult(t, apptest.CallMCP(t, session, memory.name, memory.arguments))
	svc.Call(t, a.Token, http.MethodPost, "/api/tools/call", toolCall(memory.name, memory.arguments)).WantStatus(http.StatusOK)
	if used() != 3 {
		t.Fatalf("three tool calls counted %d mentor requests", used())
	}
	refused := apptest.CallMCP(t, session, memory.name, memory.arguments)
	if text := apptest.MCPText(refused); !refused.IsError || !strings.HasPrefix(text, "Too many requests to the mentor this minute; try again in ") {
		t.Errorf("the fourth call answered %q (error %v), want the quota's refusal", text, refused.IsError)
	}
	wantRefused(t, svc.Call(t, a.Token, http.MethodPost, "/api/tools/call", toolCall(memory.name, memory.arguments)), "Too many requests to the mentor this minute", time.Minute)

	// A batch, which the protocol's first version allows in one POST.
	apptest.EndWindow(t, svc.Pool, a.ID, mentor.ModelRequests)
	var batch []string
	for i := range 4 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, memory.name, memory.arguments))
	}
	header := mcpHeaders()
	header.Set("Mcp-Protocol-Version", "2025-03-26")
	r := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/mcp", Token: a.Token, Header: header,
		Body: "[" + strings.Join(batch, ",") + "]"})
	var answers []struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(r.Raw, &answers); r.Status != http.StatusOK || err != nil || len(answers) != 4 {
		t.Fatalf("the batch answered %s (%v), want 4 answers", r, err)
	}
	var refusals int
	for _, answer := range answers {
		if answer.Result.IsError {
			refusals++
		}
	}
	if refusals != 1 || used() != 3 {
		t.Errorf("a batch of 4 calls counted %d mentor requests and was refused %d times, want 3 and 1: %s", used(), refusals, r.Raw)
	}
}

// Every POST runs as its own token's caller: the endpoint keeps no session
// that a later request could ride on. Facilitator B sending A's session id,
// were there one, still gets only B's view.
func TestMCPRequestsRunAsTheirOwnCaller(t *testing.T) {
	svc, a, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	b := svc.NewUser(t)
	svc.PostTurns(t, a, emma, apptest.Exchange("Emma's secret: she is scared of thunderstorms.", "Let's plan a calm-down corner.")...).WantStatus(http.StatusOK)
	opened := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/mcp", Token: a.Token, Header: mcpHeaders(), Body: mcpInitialize}).
		WantStatus(http.StatusOK)
	header := mcpHeaders()
	header.Set("Mcp-Session-Id", opened.Header.Get("Mcp-Session-Id"))
	header.Set("Mcp-Protocol-Version", "2025-06-18")
	r := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/mcp", Token: b.Token, Header: header,
		Body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_conversation_memory","arguments":{"learner_id":"` + emma + `"}}}`})
	var answer struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(r.Raw, &answer); r.Status != http.StatusOK || err != nil {
		t.Fatalf("B's call answered %s (%v)", r, err)
	}
	wantToolError(t, &answer.Result, "Learner not found")
}

// An MCP request is logged as any API request is, in one line; a failed
// tool call adds its hidden cause, with the request's id, and the SDK's
// own chatter about its per-request sessions stays out.
func TestMCPRequestsAreLoggedOnce(t *testing.T) {
	logs := &apptest.Logs{}
	svc, a := apptest.StartWithUser(t, apptest.Options{Logs: logs})
	r := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodPost, Path: "/mcp", Token: a.Token, Header: mcpHeaders(),
		Body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forget_memory","arguments":{"memory_id":"not-a-uuid"}}}`}).
		WantStatus(http.StatusOK)
	requestID := r.Header.Get("X-Request-ID")
	logged := logs.WaitFor(t, `"path":"/mcp"`)
	var lines []map[string]any
	for line := range strings.Lines(logged) {
		var record map[string]any
		if err := json.Unmarshal([]byte(line), &record); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		if record["request_id"] == requestID {
			lines = append(lines, record)
		} else if strings.Contains(line, "session") {
			t.Errorf("the SDK logged %s", line)
		}
	}
	if len(lines) != 2 || lines[0]["msg"] != "mcp tool call" || lines[0]["level"] != "WARN" || lines[0]["tool"] != "forget_memory" ||
		lines[1]["msg"] != "request" || lines[1]["status"] != 200.0 {
		t.Errorf("the request %s logged %v, want the failed call's cause and the request's line", requestID, lines)
	}
}
