// Package counselor is Mr. Mentor's chat: it calls the model with the
// facilitator's memory and the memory tools, and runs the tool-call loop.
package counselor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"golang.org/x/sync/errgroup"

	"mentormemory/llm"
	"mentormemory/mentor"
	"mentormemory/tools"
)

// Config is the chat model, how many rounds of tool calls one reply may
// take (DefaultMaxToolRounds when zero), how long one chat may take in
// all (DefaultDeadline when zero), and the token budget of what one model
// call is sent (DefaultContextTokens when zero).
type Config struct {
	llm.Config
	MaxToolRounds int
	Deadline      time.Duration
	ContextTokens int
}

type Counselor struct {
	client    openai.Client
	model     string
	maxRounds int
	deadline  time.Duration
	svc       *mentor.Service
	tools     *tools.Executor
	budget    llm.Budget
	log       *slog.Logger

	// contextTokens is the budget of what one model call is sent.
	contextTokens int
}

func New(cfg Config, svc *mentor.Service) *Counselor {
	rounds := cfg.MaxToolRounds
	if rounds <= 0 {
		rounds = DefaultMaxToolRounds
	}
	deadline := cfg.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	contextTokens := cfg.ContextTokens
	if contextTokens <= 0 {
		contextTokens = DefaultContextTokens
	}
	return &Counselor{client: llm.NewChatClient(cfg.Config), model: cfg.Model, maxRounds: rounds, deadline: deadline,
		contextTokens: contextTokens, svc: svc, tools: tools.NewExecutor(svc), budget: cfg.Budget, log: llm.LoggerOf(cfg.Config)}
}

// MemoryReadTimeout bounds the reads of memory for one reply: memory that
// takes longer (the database slow, or its tables held, where even planning
// a statement waits) is left out and the reply is given without it.
const MemoryReadTimeout = 3 * time.Second

// readMemory reads, within MemoryReadTimeout, what the prompt brings of
// memory: the memories recalled for the message (a long one's bounded
// part, mentor.RecallMessage), the learner's profile (its name and the
// facilitator's own lines are pinned on every message), and on a session's
// first message the opening. The reads are independent, so they run at
// once: the first words of a reply wait for the slowest, not for all.
func (c *Counselor) readMemory(ctx context.Context, req mentor.ChatRequest) (promptMemory, error) {
	ctx, cancel := context.WithTimeout(ctx, MemoryReadTimeout)
	defer cancel()
	var known promptMemory
	reads, ctx := errgroup.WithContext(ctx)
	reads.Go(func() (err error) {
		known.recall, err = c.svc.RecallContext(ctx, req.LearnerID, mentor.RecallMessage(req.Message), mentor.MemoryFilter{})
		return err
	})
	if req.LearnerID != nil {
		reads.Go(func() error {
			profile, err := c.svc.Profile(ctx, *req.LearnerID)
			known.profile = &profile
			return err
		})
	}
	if len(req.History) == 0 {
		// Today as the facilitator lives it: an evening in the Americas is
		// not yet tomorrow.
		zone := req.TimeZone
		if zone == nil {
			zone = time.UTC
		}
		reads.Go(func() (err error) {
			known.opening, err = c.svc.OpeningContext(ctx, req.LearnerID, time.Now().In(zone))
			return err
		})
	}
	return known, reads.Wait()
}

// errOutOfTime is the cause of a chat that its deadline ended.
var errOutOfTime error = llm.Kind("the chat's deadline passed")

// Chat answers one message within the chat's deadline, telling listener
// (nil: nobody) of the reply as it is made. It stores nothing: the client
// posts the exchange to the conversation memory afterwards.
func (c *Counselor) Chat(ctx context.Context, req mentor.ChatRequest, listener mentor.ChatListener) (mentor.ChatReply, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.deadline, errOutOfTime)
	defer cancel()
	if listener == nil {
		listener = nobody{}
	}
	reply, err := c.answer(ctx, req, listener)
	if err != nil && context.Cause(ctx) == errOutOfTime {
		// Whatever was under way when time ran out (a model call, a tool,
		// the database), the client hears that the mentor was too slow.
		return mentor.ChatReply{}, llm.Failure("The mentor model took too long to answer; please try again", errOutOfTime)
	}
	return reply, err
}

// answer is Chat, under the deadline Chat set.
func (c *Counselor) answer(ctx context.Context, req mentor.ChatRequest, listener mentor.ChatListener) (mentor.ChatReply, error) {
	messages, reply, err := c.prepare(ctx, req)
	if err != nil {
		return mentor.ChatReply{}, err
	}
	return c.converse(ctx, messages, reply, listener)
}

// nobody is the listener of a chat nobody watches as it is made.
type nobody struct{}

func (nobody) ReplyText(string) {}
func (nobody) ToolRuns(string)  {}

// prepare reads what the mentor knows for req and assembles the messages
// the model is sent within the context's budget (see assemble), and the
// reply's account of what went into them.
func (c *Counselor) prepare(ctx context.Context, req mentor.ChatRequest) ([]openai.ChatCompletionMessageParamUnion, mentor.ChatReply, error) {
	// Also checks that the learner is the caller's.
	conv, err := c.svc.Get(ctx, req.LearnerID)
	if err != nil {
		return nil, mentor.ChatReply{}, err
	}
	reply := mentor.ChatReply{ToolCalls: []mentor.ToolCall{}, PendingActions: []mentor.PendingAction{}, Model: c.model}
	started := time.Now()
	known, err := c.readMemory(ctx, req)
	reply.Timings.RecallMS = time.Since(started).Milliseconds()
	switch code := mentor.ErrorCode(err); {
	case err == nil:
	case code == mentor.CodeUnavailable || code == mentor.CodeInternal:
		// Memory that cannot be read now (the database slow or down for
		// it) costs the reply its memory, not the reply.
		c.log.Warn("the counselor answers without memory", "err", err)
		known = promptMemory{recall: mentor.Recall{Retrieval: mentor.Retrieval{Mode: mentor.RetrievalNone,
			Reasons: []string{"memory could not be read"}}}}
		reply.WithoutMemory = "Memory could not be read just now; this reply was given without it."
	default:
		return nil, mentor.ChatReply{}, err
	}
	known.conversation = conv
	reply.Retrieval = known.recall.Retrieval
	fitted := assemble(c.contextTokens, contextPartsFor(req, known))
	reply.MemoriesUsed = fitted.used
	reply.ContextTokens = fitted.tokens
	reply.Personalization = personalizationOf(reply.Retrieval.Mode, fitted.tokens.Blocks, len(facilitatorLines(known.profile)) > 0)
	messages := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(fitted.system)}
	for _, t := range fitted.conversation {
		if t.Role == mentor.RoleUser {
			messages = append(messages, openai.UserMessage(t.Content))
		} else {
			messages = append(messages, openai.AssistantMessage(t.Content))
		}
	}
	messages = append(messages, openai.UserMessage(fitted.message))
	return messages, reply, nil
}

// converse runs the model on messages, and the tools it calls, until it
// answers; it fills in reply's text and what its tool calls did. The
// model's text streams to listener as it is written. The reply is all the
// text the model wrote, a round's that preceded its tool calls included,
// as the listener heard it.
func (c *Counselor) converse(ctx context.Context, messages []openai.ChatCompletionMessageParamUnion, reply mentor.ChatReply, listener mentor.ChatListener) (mentor.ChatReply, error) {
	budget := toolBudget(MaxToolResultsBytes)
	var written strings.Builder
	hear := func(piece string) {
		written.WriteString(piece)
		listener.ReplyText(piece)
	}
	for round := 0; ; round++ {
		params := openai.ChatCompletionNewParams{Model: c.model, Messages: messages, Tools: tools.Definitions()}
		if round == c.maxRounds {
			// Out of rounds: ask for an answer from what was found so far.
			params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
		}
		if strings.TrimSpace(written.String()) != "" {
			// The next round's text is a paragraph of its own.
			hear("\n\n")
		}
		called := time.Now()
		resp, err := llm.Stream(ctx, c.client, c.budget, params, hear)
		reply.Timings.ModelMS += time.Since(called).Milliseconds()
		if err != nil {
			return mentor.ChatReply{}, modelFailed(err)
		}
		if len(resp.Choices) == 0 {
			return mentor.ChatReply{}, modelFailed(llm.Kind("no choices"))
		}
		msg := resp.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			reply.Reply = strings.TrimSpace(written.String())
			switch {
			case reply.Reply == "" && msg.Refusal != "":
				return mentor.ChatReply{}, modelFailed(llm.ErrRefused)
			case reply.Reply == "":
				return mentor.ChatReply{}, modelFailed(llm.Kind("empty reply"))
			}
			return reply, nil
		}
		if round == c.maxRounds {
			return mentor.ChatReply{}, llm.Failure("The mentor model kept calling tools without answering",
				llm.Kind(fmt.Sprintf("still calling tools after %d rounds", c.maxRounds)))
		}
		messages = append(messages, msg.ToParam())
		// Every call gets its tool message, run or not: the model's API
		// refuses a request that leaves one of them unanswered.
		for i, call := range msg.ToolCalls {
			listener.ToolRuns(call.Function.Name)
			made := mentor.ToolCall{Name: call.Function.Name, Arguments: call.Function.Arguments}
			result := c.runTool(ctx, i, &made, &budget, &reply.PendingActions)
			reply.ToolCalls = append(reply.ToolCalls, made)
			messages = append(messages, openai.ToolMessage(result, call.ID))
		}
	}
}

// runTool runs call, the index-th tool call of a round, within the chat's
// bounds, and returns its result as JSON for the model. It notes on call
// what the bounds capped, if anything, and how many results a search
// found. A failed call becomes an error result the model can read and
// correct. A call that proposed a change adds its pending action to
// proposed, for the facilitator to decide.
func (c *Counselor) runTool(ctx context.Context, index int, call *mentor.ToolCall, budget *toolBudget, proposed *[]mentor.PendingAction) string {
	switch {
	case index >= MaxToolCallsPerRound:
		call.Capped = cappedTooMany
		return toolErrorResult(fmt.Sprintf("Not run: at most %d tool calls are run at once; call fewer tools at a time", MaxToolCallsPerRound))
	case *budget < minToolResultBytes:
		call.Capped = cappedBudget
		return toolErrorResult("Not run: this message has used up its space for tool results; answer from what you have found")
	}
	result, err := c.tools.Call(ctx, call.Name, call.Arguments)
	if err != nil {
		return toolErrorResult(mentor.ErrorMessage(err))
	}
	switch r := result.(type) {
	case tools.Proposed:
		*proposed = append(*proposed, r.PendingAction)
	case tools.Found:
		found := r.Found()
		call.Found = &found
	}
	encoded, capped := budget.fit(result)
	call.Capped = capped
	return encoded
}

func modelFailed(cause error) error {
	return llm.Failure("The mentor model failed; please try again", cause)
}
