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
		var args struct {
			LearnerID *string `json:"learner_id"`
		}
		if err := parseArguments(arguments, []string{"learner_id"}, &args); err != nil {
			return nil, err
		}
		learnerID, err := optionalUUID(args.LearnerID)
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
	default:
		return nil, mentor.Errorf(mentor.CodeInvalid, "Unknown tool %q: available tools are %s, %s and %s",
			name, GetConversationMemory, SearchConversationHistory, RecallLearnerMemories)
	}
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

type foundItem struct {
	Summary        string        `json:"summary"`
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
