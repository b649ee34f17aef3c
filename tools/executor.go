package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"slices"
	"strings"
	"time"

	"mentormemory/mentor"
)

// searchResultsForModel bounds how many conversations a search returns to
// the model, to keep its context small.
const searchResultsForModel = 5

// recentContextTurns is how many of the latest turns the memory tool shows.
const recentContextTurns = 6

// Executor runs tool calls as the caller found in the context.
type Executor struct {
	svc *mentor.Service
}

func NewExecutor(svc *mentor.Service) *Executor {
	return &Executor{svc: svc}
}

// Call runs the named tool with the arguments exactly as the model produced
// them (a JSON object in a string). Unknown tools and arguments that break
// the tool's schema give CodeInvalid errors whose messages tell the model
// what to fix.
func (x *Executor) Call(ctx context.Context, name, arguments string) (any, error) {
	switch name {
	case GetConversationMemory:
		learnerID, err := learnerArgument(arguments)
		if err != nil {
			return nil, err
		}
		return x.getMemory(ctx, learnerID)
	case SearchConversationHistory:
		var args struct {
			Search         string `json:"search"`
			IncludeArchive *bool  `json:"include_archive"`
		}
		if err := parseArguments(arguments, []string{"search", "include_archive"}, &args); err != nil {
			return nil, err
		}
		includeArchive := args.IncludeArchive == nil || *args.IncludeArchive
		return x.search(ctx, args.Search, includeArchive)
	case RecallLearnerMemories:
		var args struct {
			LearnerID *string `json:"learner_id"`
			About     string  `json:"about"`
			Type      *string `json:"type"`
			Emotion   *string `json:"emotion"`
		}
		if err := parseArguments(arguments, []string{"learner_id", "about", "type", "emotion"}, &args); err != nil {
			return nil, err
		}
		learnerID, err := optionalUUID(args.LearnerID)
		if err != nil {
			return nil, err
		}
		filter := mentor.MemoryFilter{Type: mentor.MemoryType(deref(args.Type)), Emotion: deref(args.Emotion)}
		return x.recall(ctx, learnerID, args.About, filter)
	case ListLearnerMemories:
		learnerID, err := learnerArgument(arguments)
		if err != nil {
			return nil, err
		}
		return x.list(ctx, learnerID)
	case ForgetMemory, FlagMemory:
		var args struct {
			MemoryID string `json:"memory_id"`
		}
		if err := parseArguments(arguments, []string{"memory_id"}, &args); err != nil {
			return nil, err
		}
		if name == FlagMemory {
			return x.flag(ctx, args.MemoryID)
		}
		return x.propose(ctx, mentor.Proposal{Kind: mentor.ActionForgetMemory, MemoryID: args.MemoryID})
	case ForgetTopic:
		var args struct {
			LearnerID *string `json:"learner_id"`
			Topic     string  `json:"topic"`
		}
		if err := parseArguments(arguments, []string{"learner_id", "topic"}, &args); err != nil {
			return nil, err
		}
		learnerID, err := optionalUUID(args.LearnerID)
		if err != nil {
			return nil, err
		}
		return x.propose(ctx, mentor.Proposal{Kind: mentor.ActionForgetTopic, LearnerID: learnerID, Topic: args.Topic})
	case CorrectMemory:
		var args struct {
			MemoryID string `json:"memory_id"`
			Content  string `json:"content"`
		}
		if err := parseArguments(arguments, []string{"memory_id", "content"}, &args); err != nil {
			return nil, err
		}
		return x.propose(ctx, mentor.Proposal{Kind: mentor.ActionCorrectMemory, MemoryID: args.MemoryID, Content: args.Content})
	default:
		all := names()
		return nil, mentor.Errorf(mentor.CodeInvalid, "Unknown tool %q: available tools are %s and %s",
			name, strings.Join(all[:len(all)-1], ", "), all[len(all)-1])
	}
}

// names lists the tools' names, as the model is offered them.
func names() []string {
	defs := Definitions()
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.OfFunction.Function.Name
	}
	return out
}

// parseArguments decodes a tool's arguments and checks them against its
// strict schema: a JSON object with exactly the listed properties.
func parseArguments(arguments string, properties []string, dst any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(arguments), &fields); err != nil || fields == nil {
		return mentor.Errorf(mentor.CodeInvalid, "Tool arguments must be a JSON object")
	}
	for key := range fields {
		if !slices.Contains(properties, key) {
			return mentor.Errorf(mentor.CodeInvalid, "Unknown argument %q: expected %s", key, strings.Join(properties, ", "))
		}
	}
	for _, key := range properties {
		if _, ok := fields[key]; !ok {
			return mentor.Errorf(mentor.CodeInvalid, "Missing argument %q (use null when it does not apply)", key)
		}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(arguments)))
	if err := dec.Decode(dst); err != nil {
		if typeErr, ok := err.(*json.UnmarshalTypeError); ok {
			return mentor.Errorf(mentor.CodeInvalid, "Argument %q has the wrong type: want %s", typeErr.Field, typeErr.Type)
		}
		return mentor.Errorf(mentor.CodeInvalid, "Tool arguments must be a JSON object")
	}
	return nil
}

// learnerArgument reads the arguments of a tool whose one argument is
// learner_id.
func learnerArgument(arguments string) (*string, error) {
	var args struct {
		LearnerID *string `json:"learner_id"`
	}
	if err := parseArguments(arguments, []string{"learner_id"}, &args); err != nil {
		return nil, err
	}
	return optionalUUID(args.LearnerID)
}

func optionalUUID(s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	return mentor.ParseLearnerID(*s)
}

type memoryResult struct {
	Success       bool          `json:"success"`
	HasMemory     bool          `json:"has_memory"`
	Summary       string        `json:"summary"`
	TurnCount     int           `json:"turn_count"`
	LastUpdated   *time.Time    `json:"last_updated"`
	RecentContext []contextTurn `json:"recent_context"`
}

type contextTurn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (x *Executor) getMemory(ctx context.Context, learnerID *string) (memoryResult, error) {
	conv, err := x.svc.Get(ctx, learnerID)
	if err != nil || conv == nil {
		return memoryResult{Success: err == nil, RecentContext: []contextTurn{}}, err
	}
	turns, err := conv.RecentTurns.Turns()
	if err != nil {
		return memoryResult{}, err
	}
	recent := turns[max(0, len(turns)-recentContextTurns):]
	result := memoryResult{
		Success:       true,
		HasMemory:     true,
		Summary:       conv.Summary,
		TurnCount:     conv.TurnCount,
		LastUpdated:   &conv.UpdatedAt,
		RecentContext: make([]contextTurn, len(recent)),
	}
	for i, t := range recent {
		result.RecentContext[i] = contextTurn{Role: t.Role, Content: t.Content}
	}
	return result, nil
}

type searchResult struct {
	Success bool        `json:"success"`
	Count   int         `json:"count"`
	Results []foundItem `json:"results"`
}

// Found is a result that found things: a search, which says how many
// conversations it found.
type Found interface {
	Found() int
}

func (r searchResult) Found() int { return r.Count }

type foundItem struct {
	Summary string `json:"summary"`
	// Date is when the conversation was held, its latest turn (when it was
	// last written or archived, for one whose turns were all archived), so
	// that the model answers "when did we…" with the day it was said, not
	// the day imported history was stored.
	Date           time.Time     `json:"date"`
	LearnerContext string        `json:"learner_context"`
	Snippet        string        `json:"snippet"`
	Matches        []contextTurn `json:"matches"`
}

func (x *Executor) search(ctx context.Context, text string, includeArchive bool) (searchResult, error) {
	found, err := x.svc.Search(ctx, mentor.SearchQuery{Text: text, IncludeArchive: includeArchive, Limit: searchResultsForModel})
	if err != nil {
		return searchResult{}, err
	}
	result := searchResult{Success: true, Count: len(found), Results: make([]foundItem, len(found))}
	for i, r := range found {
		matches, err := r.Matches.Turns()
		if err != nil {
			return searchResult{}, err
		}
		item := foundItem{
			Summary:        r.Summary,
			Date:           r.Date,
			LearnerContext: r.LearnerContext,
			Snippet:        plainSnippet(r.Snippet),
			Matches:        make([]contextTurn, len(matches)),
		}
		if r.LastTurnAt != nil {
			item.Date = *r.LastTurnAt
		}
		for j, m := range matches {
			item.Matches[j] = contextTurn{Role: m.Role, Content: m.Content}
		}
		result.Results[i] = item
	}
	return result, nil
}

// plainSnippet turns the API's HTML snippet into plain text for the model,
// with the matched words in **bold** as models read Markdown well.
func plainSnippet(snippet string) string {
	return html.UnescapeString(strings.NewReplacer("<mark>", "**", "</mark>", "**").Replace(snippet))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type recallResult struct {
	Success bool `json:"success"`
	// Memories grouped by type; each is a short fact with its feeling.
	Academic          []recalledFact `json:"academic"`
	Personal          []recalledFact `json:"personal"`
	Preferences       []recalledFact `json:"preferences"`
	Context           []recalledFact `json:"context"`
	EmotionalPatterns []recalledFact `json:"emotional_patterns"`
}

type recalledFact struct {
	Fact    string `json:"fact"`
	Emotion string `json:"emotion,omitempty"`
	// Learnt is the day the fact was last learnt, for the model's sense of
	// time; the persona tells it never to recite dates.
	Learnt string `json:"learnt"`
}

func (x *Executor) recall(ctx context.Context, learnerID *string, about string, filter mentor.MemoryFilter) (recallResult, error) {
	r, err := x.svc.RecallContext(ctx, learnerID, about, filter)
	if err != nil {
		return recallResult{}, err
	}
	facts := func(ms []mentor.RecalledMemory) []recalledFact {
		out := make([]recalledFact, len(ms))
		for i, m := range ms {
			out[i] = recalledFact{Fact: m.Content, Emotion: m.Metadata.Emotion(), Learnt: m.LastSeenAt.Format(time.DateOnly)}
		}
		return out
	}
	return recallResult{
		Success: true, Academic: facts(r.Academic), Personal: facts(r.Personal),
		Preferences: facts(r.Preferences), Context: facts(r.Context), EmotionalPatterns: facts(r.EmotionalPatterns),
	}, nil
}

// listResult is everything remembered about a learner, by category.
type listResult struct {
	Success    bool         `json:"success"`
	Count      int          `json:"count"`
	Academic   []listedFact `json:"academic"`
	Personal   []listedFact `json:"personal"`
	Preference []listedFact `json:"preference"`
	Context    []listedFact `json:"context"`
}

type listedFact struct {
	ID         string  `json:"id"`
	Fact       string  `json:"fact"`
	Confidence float64 `json:"confidence"`
	// NeedsReview: flagged, or changed without a person, and not yet
	// looked at.
	NeedsReview bool `json:"needs_review,omitempty"`
}

// list answers "what do you remember about Emma?": the learner's current
// memories, newest first in each category, with their confidence as of now.
func (x *Executor) list(ctx context.Context, learnerID *string) (listResult, error) {
	// Current ones only, in the query: past ones must not take the limit's
	// room.
	memories, err := x.svc.ListMemories(ctx, mentor.ListQuery{LearnerID: learnerID, Limit: mentor.MaxMemoryList, CurrentOnly: true})
	if err != nil {
		return listResult{}, err
	}
	result := listResult{Success: true, Academic: []listedFact{}, Personal: []listedFact{}, Preference: []listedFact{}, Context: []listedFact{}}
	groups := map[mentor.MemoryType]*[]listedFact{
		mentor.Academic: &result.Academic, mentor.Personal: &result.Personal,
		mentor.Preference: &result.Preference, mentor.Context: &result.Context,
	}
	for _, m := range memories {
		group, ok := groups[m.Type]
		if !ok {
			continue
		}
		*group = append(*group, listedFact{ID: m.ID, Fact: m.Content, Confidence: m.Confidence, NeedsReview: m.NeedsReview})
		result.Count++
	}
	return result, nil
}

// Proposed is the result of a destructive tool: the pending action its
// call stored, which the chat's reply carries for the facilitator to
// confirm or cancel.
type Proposed struct {
	Success       bool                 `json:"success"`
	PendingAction mentor.PendingAction `json:"pending_action"`
	Message       string               `json:"message"`
}

func (x *Executor) propose(ctx context.Context, p mentor.Proposal) (Proposed, error) {
	action, err := x.svc.Propose(ctx, p)
	if err != nil {
		return Proposed{}, err
	}
	return Proposed{Success: true, PendingAction: action,
		Message: "Nothing has changed yet. The facilitator sees this proposal under your reply with Confirm and Cancel buttons; tell them what you proposed and that it happens only when they confirm."}, nil
}

type flagResult struct {
	Success     bool   `json:"success"`
	MemoryID    string `json:"memory_id"`
	NeedsReview bool   `json:"needs_review"`
	Message     string `json:"message"`
}

func (x *Executor) flag(ctx context.Context, memoryID string) (flagResult, error) {
	m, err := x.svc.FlagMemory(ctx, memoryID)
	if err != nil {
		return flagResult{}, err
	}
	return flagResult{Success: true, MemoryID: m.ID, NeedsReview: m.NeedsReview,
		Message: "Flagged for the facilitator's review; the memory is kept as it is until they confirm or correct it."}, nil
}
