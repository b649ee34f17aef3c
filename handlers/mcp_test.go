package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mentormemory/app/apptest"
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
	svc := apptest.Start(t, apptest.Options{})
	a := svc.NewUser(t)
	emma := svc.NewLearner(t, a, "Emma")
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
