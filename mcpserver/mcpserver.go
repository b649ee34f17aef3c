// Package mcpserver serves the mentor's tools over the Model Context
// Protocol's streamable HTTP transport, for assistants other than the
// counselor (desktop and IDE assistants, agent frameworks). The tools are
// the ones the counselor's model calls: their definitions and schemas come
// from package tools, and each call runs through the same executor, so as
// the caller in the request's context, under the same row-level security.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mentormemory/mentor"
	"mentormemory/tools"
)

// instructions tell a connected assistant what the tools are and how the
// destructive ones behave here, where no button shows under its reply.
var instructions = fmt.Sprintf("The memory of an AI mentor that parents and teachers (facilitators) talk with about their learners. "+
	"Every tool acts as the facilitator whose token the request carries and sees only their data. "+
	"forget_memory, forget_topic and correct_memory change nothing: each returns a pending action, "+
	"which happens only when the facilitator confirms it (POST /api/actions/{id}/confirm with their token, "+
	"within %d minutes). Tell them what you proposed; never say it is done.", int(mentor.ActionTTL.Minutes()))

// Handler returns the MCP endpoint. It expects every request to come
// through the API's auth, which verifies the bearer token and puts the
// caller in the request's context: it runs stateless, so each POST is a
// session of its own, built on its request's context, and each tool call
// runs as that request's caller. (A stateful session would keep the
// context of the request that opened it, and so its caller, for the
// requests after it; and a serverless instance may never see the session's
// next request.) Answers are plain JSON, one per POST, rather than an event
// stream: the tools send no notifications, and the API's write deadline
// and admission then bound an MCP answer as they bound any other.
//
// Each tool call is charged one mentor request a minute (limits), as
// POST /api/tools/call is; listing the tools, like GET /api/tools, costs
// nothing.
func Handler(x *tools.Executor, limits mentor.Limits, log *slog.Logger) http.Handler {
	// The SDK logs every stateless session's start and end at info: a few
	// lines more for each request, which the API logs in one.
	sdkLog := slog.New(atLeast{log.Handler(), slog.LevelWarn})
	server := mcp.NewServer(&mcp.Implementation{Name: "mentormemory", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: instructions, Logger: sdkLog})
	for _, def := range tools.Definitions() {
		f := def.OfFunction.Function
		server.AddTool(&mcp.Tool{Name: f.Name, Description: f.Description.Value, InputSchema: f.Parameters},
			callTool(x, f.Name, limits, log))
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The SDK refuses a request that reached a loopback address under
		// another host name, against DNS rebinding of an unauthenticated
		// local server. Every request here carries a bearer token that a
		// rebinding page cannot have, and the check would refuse the
		// service behind a reverse proxy on the same machine.
		DisableLocalhostProtection: true,
		Logger:                     sdkLog,
	})
}

// callTool runs one tool as the request's caller. A call that fails is a
// tool error result carrying the API's public message (an unknown
// learner, arguments that break the schema, a quota used up), so the
// assistant can correct itself; only the message leaves the server.
func callTool(x *tools.Executor, name string, limits mentor.Limits, log *slog.Logger) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Charged per call, not per POST: an older protocol version lets
		// one POST carry a batch of calls.
		if charge, limited := limits.Charge(mentor.ModelRequests, 1); limited {
			ctx = mentor.WithRequestCharge(ctx, charge)
		}
		result, err := x.Call(ctx, name, string(req.Params.Arguments))
		var encoded []byte
		if err == nil {
			encoded, err = json.Marshal(result)
		}
		if err != nil {
			logFailure(log, req, name, err)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: mentor.ErrorMessage(err)}}}, nil
		}
		// The JSON as text too, as the protocol asks of structured content
		// for clients that read only text.
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(encoded)}},
			StructuredContent: json.RawMessage(encoded),
		}, nil
	}
}

// logFailure logs a failed call's hidden cause with the request's id, as
// the API logs a failed request's: the HTTP request itself succeeded.
func logFailure(log *slog.Logger, req *mcp.CallToolRequest, name string, err error) {
	level := slog.LevelWarn
	if mentor.ErrorCode(err) == mentor.CodeInternal {
		level = slog.LevelError
	}
	var requestID string
	if req.Extra != nil {
		requestID = req.Extra.Header.Get("X-Request-ID")
	}
	log.Log(context.Background(), level, "mcp tool call", "tool", name, "request_id", requestID, "err", err)
}

// atLeast passes on the records of min and above.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.min && h.Handler.Enabled(ctx, level)
}

func (h atLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(attrs), h.min}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}
