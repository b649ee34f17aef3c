package tools_test

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"mentormemory/mentor"
	"mentormemory/tools"
)

// recordingStore answers the calls the tools make with nothing and
// records what reached it. Any other method panics on the nil Store, which
// the fuzz test reports: a tool call reads, flags a memory for review or
// proposes a change, and changes no memory otherwise.
type recordingStore struct {
	mentor.Store
	calls    []string
	learners []*string
	search   mentor.SearchQuery
	recall   mentor.RecallQuery
	list     mentor.ListQuery
	proposal mentor.Proposal
	flagged  string
}

func (s *recordingStore) ListMemories(_ context.Context, q mentor.ListQuery) ([]mentor.LearnerMemory, error) {
	s.calls = append(s.calls, "ListMemories")
	s.list = q
	return nil, nil
}

func (s *recordingStore) ProposeAction(_ context.Context, p mentor.Proposal) (mentor.PendingAction, error) {
	s.calls = append(s.calls, "ProposeAction")
	s.proposal = p
	return mentor.PendingAction{}, nil
}

func (s *recordingStore) FlagMemory(_ context.Context, id string) (mentor.LearnerMemory, error) {
	s.calls = append(s.calls, "FlagMemory")
	s.flagged = id
	return mentor.LearnerMemory{ID: id, NeedsReview: true}, nil
}

func (s *recordingStore) GetConversation(_ context.Context, learnerID *string) (*mentor.ConversationRecord, error) {
	s.calls = append(s.calls, "GetConversation")
	s.learners = append(s.learners, learnerID)
	return nil, nil
}

func (s *recordingStore) Search(_ context.Context, q mentor.SearchQuery) ([]mentor.SearchResult, error) {
	s.calls = append(s.calls, "Search")
	s.search = q
	return nil, nil
}

func (s *recordingStore) LiveSession(_ context.Context, learnerID *string) (mentor.SessionState, error) {
	s.calls = append(s.calls, "LiveSession")
	s.learners = append(s.learners, learnerID)
	return mentor.SessionState{}, nil
}

func (s *recordingStore) Recall(_ context.Context, q mentor.RecallQuery) (mentor.Recall, error) {
	s.calls = append(s.calls, "Recall")
	s.recall = q
	return mentor.Recall{}, nil
}

// toolSchema is the part of a tool's JSON schema the arguments are checked
// against.
type toolSchema struct {
	Properties map[string]struct {
		Type any   `json:"type"` // a type or a list of types
		Enum []any `json:"enum"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties bool     `json:"additionalProperties"`
}

// schemas reads the schemas the model is offered, and checks that they are
// strict: every property required, no other allowed.
func schemas(f *testing.F) map[string]toolSchema {
	all := map[string]toolSchema{}
	for _, d := range tools.Definitions() {
		fn := d.OfFunction.Function
		b, err := json.Marshal(fn.Parameters)
		if err != nil {
			f.Fatal(err)
		}
		var s toolSchema
		if err := json.Unmarshal(b, &s); err != nil {
			f.Fatal(err)
		}
		if s.AdditionalProperties || len(s.Required) != len(s.Properties) {
			f.Fatalf("%s: schema is not strict", fn.Name)
		}
		all[fn.Name] = s
	}
	return all
}

// FuzzToolArguments calls each tool with any arguments through the real
// executor and service over a store that only records. A call is either
// refused with a CodeInvalid error before reaching the store, or its
// arguments have exactly the schema's properties and types and reach the
// store cleaned; and arguments that follow the schema strictly and keep
// within the limits are never refused.
func FuzzToolArguments(f *testing.F) {
	byName := schemas(f)
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, name, arguments string) {
		store := &recordingStore{}
		result, err := tools.NewExecutor(mentor.NewService(store, nil, log)).Call(context.Background(), name, arguments)
		schema, known := byName[name]
		fields, schemaErr := checkSchema(arguments, schema)

		if err != nil {
			e, ok := err.(*mentor.Error)
			if !ok || e.Code != mentor.CodeInvalid || e.Message == "" || !utf8.ValidString(e.Message) {
				t.Fatalf("want a CodeInvalid *mentor.Error with a message, got %T %v", err, err)
			}
			if len(store.calls) > 0 {
				t.Fatalf("refused (%v) after calling the store: %v", err, store.calls)
			}
			if known && schemaErr == "" && !duplicateKeys(arguments) && withinLimits(fields) && inEnum(fields) {
				t.Fatalf("%s(%s) refused: %v", name, arguments, err)
			}
			return
		}
		if !known {
			t.Fatalf("unknown tool %q ran", name)
		}
		if schemaErr != "" || !withinLimits(fields) {
			t.Fatalf("%s(%s) ran: %s", name, arguments, cmp.Or(schemaErr, "out of limits"))
		}
		if _, err := json.Marshal(result); err != nil {
			t.Fatalf("result %#v: %v", result, err)
		}
		requireStoreCalls(t, name, fields, store)
	})
}

// checkSchema decodes arguments and says how they break the schema's
// properties and types ("" when they follow them).
func checkSchema(arguments string, schema toolSchema) (map[string]any, string) {
	var fields map[string]any
	if err := json.Unmarshal([]byte(arguments), &fields); err != nil || fields == nil {
		return nil, "not a JSON object"
	}
	for key, value := range fields {
		property, ok := schema.Properties[key]
		if !ok {
			return nil, "unknown property " + key
		}
		types, ok := property.Type.([]any)
		if !ok {
			types = []any{property.Type}
		}
		if !slices.Contains(types, any(jsonType(value))) {
			return nil, key + " is a " + jsonType(value)
		}
	}
	for _, key := range schema.Required {
		if _, ok := fields[key]; !ok {
			return nil, "missing " + key
		}
	}
	return fields, ""
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// duplicateKeys tells whether the arguments name a property twice, which
// encoding/json resolves differently for a map and a struct.
func duplicateKeys(arguments string) bool {
	dec := json.NewDecoder(strings.NewReader(arguments))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return false
		}
		if seen[key] {
			return true
		}
		seen[key] = true
		var value json.RawMessage
		if dec.Decode(&value) != nil {
			return false
		}
	}
	return false
}

// withinLimits tells whether arguments that follow the schema's properties
// and types also keep to the service's limits.
func withinLimits(fields map[string]any) bool {
	text := func(key string) string { s, _ := fields[key].(string); return s }
	// At most max characters, without control characters other than tab
	// and line breaks, and without bidirectional overrides.
	fits := func(s string, max int) bool {
		return utf8.RuneCountInString(s) <= max && !strings.ContainsFunc(s, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7F && r <= 0x9F ||
				r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
		})
	}
	if _, ok := fields["learner_id"].(string); ok && !learnerIDOK(text("learner_id")) {
		return false
	}
	if _, ok := fields["search"]; ok {
		if s := strings.TrimSpace(text("search")); s == "" || !fits(s, mentor.MaxSearchChars) {
			return false
		}
	}
	if _, ok := fields["memory_id"]; ok && !memoryIDOK(text("memory_id")) {
		return false
	}
	for key, max := range map[string]int{"content": mentor.MaxMemoryChars, "topic": mentor.MaxTopicChars} {
		if _, ok := fields[key]; ok {
			if s := strings.TrimSpace(text(key)); s == "" || !fits(s, max) {
				return false
			}
		}
	}
	return fits(strings.TrimSpace(text("about")), mentor.MaxRecallMessageChar) &&
		fits(strings.TrimSpace(text("emotion")), mentor.MaxMetadataValueChar)
}

// memoryIDOK: a uuid in its 36-character form.
func memoryIDOK(raw string) bool {
	raw = strings.TrimSpace(raw)
	_, err := uuid.Parse(raw)
	return len(raw) == 36 && err == nil
}

// inEnum tells whether the type is one the schema lists. The executor is
// more lenient: it also takes "" for null and any case and spacing.
func inEnum(fields map[string]any) bool {
	typ, ok := fields["type"].(string)
	return !ok || slices.Contains(mentor.MemoryTypes, mentor.MemoryType(typ))
}

// learnerIDOK: a uuid in its 36-character form, or "" or "null" for the
// general conversation.
func learnerIDOK(raw string) bool {
	raw = strings.TrimSpace(raw)
	_, err := uuid.Parse(raw)
	return raw == "" || raw == "null" || len(raw) == 36 && err == nil
}

// requireStoreCalls checks that a call that ran asked the store for exactly
// what its arguments say, cleaned.
func requireStoreCalls(t *testing.T, name string, fields map[string]any, store *recordingStore) {
	t.Helper()
	text := func(key string) string { s, _ := fields[key].(string); return s }
	var learner *string
	if raw, ok := fields["learner_id"].(string); ok {
		learner, _ = mentor.ParseLearnerID(raw)
		if learner != nil && uuid.MustParse(*learner).String() != *learner {
			t.Fatalf("learner_id %q is not in canonical form", *learner)
		}
	}
	sameLearner := func(got *string) bool {
		return (got == nil) == (learner == nil) && (got == nil || *got == *learner)
	}

	switch name {
	case tools.GetConversationMemory:
		if !slices.Equal(store.calls, []string{"GetConversation"}) || !sameLearner(store.learners[0]) {
			t.Fatalf("store calls %v for learner %v", store.calls, store.learners)
		}
	case tools.SearchConversationHistory:
		q := store.search
		if !slices.Equal(store.calls, []string{"Search"}) || q.LearnerID != nil ||
			q.Text != strings.TrimSpace(text("search")) || q.Text == "" ||
			q.IncludeArchive != (fields["include_archive"] != false) || q.Limit < 1 || q.Limit > mentor.MaxSearchLimit {
			t.Fatalf("store calls %v, search %+v, arguments %v", store.calls, q, fields)
		}
	case tools.RecallLearnerMemories:
		q := store.recall
		wantType := mentor.MemoryType(strings.ToLower(strings.TrimSpace(text("type"))))
		if !slices.Equal(store.calls, []string{"LiveSession", "Recall"}) ||
			!sameLearner(store.learners[0]) || !sameLearner(q.LearnerID) ||
			q.Message != strings.TrimSpace(text("about")) ||
			q.Filter.Type != wantType || (wantType != "" && !slices.Contains(mentor.MemoryTypes, wantType)) ||
			q.Filter.Emotion != strings.ToLower(strings.TrimSpace(text("emotion"))) ||
			!slices.Equal(q.Emotions, mentor.EmotionsIn(q.Message)) {
			t.Fatalf("store calls %v, recall %+v, arguments %v", store.calls, q, fields)
		}
	case tools.ListLearnerMemories:
		q := store.list
		if !slices.Equal(store.calls, []string{"ListMemories"}) || !sameLearner(q.LearnerID) || q.All || q.Limit != mentor.MaxMemoryList {
			t.Fatalf("store calls %v, list %+v, arguments %v", store.calls, q, fields)
		}
	case tools.FlagMemory:
		if !slices.Equal(store.calls, []string{"FlagMemory"}) || store.flagged != canonicalUUID(text("memory_id")) {
			t.Fatalf("store calls %v, flagged %q, arguments %v", store.calls, store.flagged, fields)
		}
	case tools.ForgetMemory, tools.ForgetTopic, tools.CorrectMemory:
		p := store.proposal
		want := mentor.Proposal{Kind: map[string]string{tools.ForgetMemory: mentor.ActionForgetMemory,
			tools.ForgetTopic: mentor.ActionForgetTopic, tools.CorrectMemory: mentor.ActionCorrectMemory}[name],
			Topic: strings.TrimSpace(text("topic")), Content: strings.TrimSpace(text("content"))}
		if _, ok := fields["memory_id"]; ok {
			want.MemoryID = canonicalUUID(text("memory_id"))
		}
		if !slices.Equal(store.calls, []string{"ProposeAction"}) || !sameLearner(p.LearnerID) ||
			p.Kind != want.Kind || p.MemoryID != want.MemoryID || p.Topic != want.Topic || p.Content != want.Content {
			t.Fatalf("store calls %v, proposal %+v, want %+v", store.calls, p, want)
		}
	}
}

func canonicalUUID(raw string) string {
	return uuid.MustParse(strings.TrimSpace(raw)).String()
}
