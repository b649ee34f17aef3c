// Package counselor is Mr. Mentor's chat: it calls the model with the
// facilitator's memory and the memory tools, and runs the tool-call loop.
package counselor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/tools"
)

// DefaultMaxToolRounds bounds how many rounds of tool calls one reply may
// take, so a model that never stops calling tools cannot hold a request.
const DefaultMaxToolRounds = 4

// Config is the chat model, and how many rounds of tool calls one reply
// may take (DefaultMaxToolRounds when zero).
type Config struct {
	llm.Config
	MaxToolRounds int
}

type Counselor struct {
	client    openai.Client
	model     string
	maxRounds int
	svc       *mentor.Service
	tools     *tools.Executor
	budget    llm.Budget
}

func New(cfg Config, svc *mentor.Service) *Counselor {
	rounds := cfg.MaxToolRounds
	if rounds <= 0 {
		rounds = DefaultMaxToolRounds
	}
	return &Counselor{client: llm.NewChatClient(cfg.Config), model: cfg.Model, maxRounds: rounds, svc: svc, tools: tools.NewExecutor(svc), budget: cfg.Budget}
}

// Chat answers one message. It stores nothing: the client posts the
// exchange to the conversation memory afterwards.
func (c *Counselor) Chat(ctx context.Context, req mentor.ChatRequest) (mentor.ChatReply, error) {
	// Also checks that the learner is the caller's.
	conv, err := c.svc.Get(ctx, req.LearnerID)
	if err != nil {
		return mentor.ChatReply{}, err
	}
	known := promptMemory{conversation: conv}
	if known.recall, err = c.svc.RecallContext(ctx, req.LearnerID, req.Message, mentor.MemoryFilter{}); err != nil {
		return mentor.ChatReply{}, err
	}
	if len(req.History) == 0 {
		if known.opening, err = c.svc.OpeningContext(ctx, req.LearnerID, time.Now().UTC()); err != nil {
			return mentor.ChatReply{}, err
		}
	}
	messages := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(systemPrompt(req, known)),
	}
	for _, t := range req.History {
		if t.Role == mentor.RoleUser {
			messages = append(messages, openai.UserMessage(t.Content))
		} else {
			messages = append(messages, openai.AssistantMessage(t.Content))
		}
	}
	messages = append(messages, openai.UserMessage(req.Message))

	reply := mentor.ChatReply{ToolCalls: []mentor.ToolCall{}, Retrieval: known.recall.Retrieval}
	for round := 0; ; round++ {
		params := openai.ChatCompletionNewParams{Model: c.model, Messages: messages, Tools: tools.Definitions()}
		if round == c.maxRounds {
			// Out of rounds: ask for an answer from what was found so far.
			params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
		}
		resp, err := llm.Complete(ctx, c.client, c.budget, params)
		if err != nil {
			return mentor.ChatReply{}, modelFailed(err)
		}
		if len(resp.Choices) == 0 {
			return mentor.ChatReply{}, modelFailed(fmt.Errorf("no choices"))
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			reply.Reply = strings.TrimSpace(msg.Content)
			if reply.Reply == "" {
				return mentor.ChatReply{}, modelFailed(fmt.Errorf("empty reply"))
			}
			return reply, nil
		}
		if round == c.maxRounds {
			return mentor.ChatReply{}, llm.Failure("The mentor model kept calling tools without answering",
				fmt.Errorf("still calling tools after %d rounds", c.maxRounds))
		}
		messages = append(messages, msg.ToParam())
		for _, call := range msg.ToolCalls {
			reply.ToolCalls = append(reply.ToolCalls, mentor.ToolCall{Name: call.Function.Name, Arguments: call.Function.Arguments})
			messages = append(messages, openai.ToolMessage(c.runTool(ctx, call.Function.Name, call.Function.Arguments), call.ID))
		}
	}
}

// runTool returns the tool's result as JSON for the model; a failed call
// becomes an error result the model can read and correct.
func (c *Counselor) runTool(ctx context.Context, name, arguments string) string {
	result, err := c.tools.Call(ctx, name, arguments)
	if err != nil {
		result = map[string]any{"success": false, "error": mentor.ErrorMessage(err)}
	}
	encoded, err := json.Marshal(result)
	if err != nil {
		return `{"success":false,"error":"Tool result could not be encoded"}`
	}
	return string(encoded)
}

func modelFailed(cause error) error {
	return llm.Failure("The mentor model failed; please try again", cause)
}
