package apptest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP connects the MCP SDK's own client to the service's /mcp endpoint over
// its streamable HTTP transport, with token as the bearer token on every
// request, as a desktop assistant configured with the facilitator's token
// does. The session closes when the test ends.
func (s *Service) MCP(tb testing.TB, token string) *mcp.ClientSession {
	tb.Helper()
	session, err := s.ConnectMCP(token)
	if err != nil {
		tb.Fatalf("connecting to %s/mcp: %v", s.URL, err)
	}
	tb.Cleanup(func() { _ = session.Close() })
	return session
}

// ConnectMCP is MCP for a connection that may fail: with a bad token, say.
func (s *Service) ConnectMCP(token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "apptest", Version: "1.0.0"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: withBearer{token: token, next: http.DefaultTransport}},
	}, nil)
}

// CallMCP calls a tool through session with arguments, a JSON object as
// text, and returns its result. A tool error is a result, with IsError set;
// a protocol error fails the test.
func CallMCP(tb testing.TB, session *mcp.ClientSession, name, arguments string) *mcp.CallToolResult {
	tb.Helper()
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(arguments)})
	if err != nil {
		tb.Fatalf("MCP %s(%s): %v", name, arguments, err)
	}
	return res
}

// MCPText is the text of a tool result's content, joined.
func MCPText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if text, ok := c.(*mcp.TextContent); ok {
			b.WriteString(text.Text)
		}
	}
	return b.String()
}

// withBearer sends every request with a bearer token.
type withBearer struct {
	token string
	next  http.RoundTripper
}

func (b withBearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}
