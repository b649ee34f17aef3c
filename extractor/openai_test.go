package extractor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"mentormemory/llm"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
)

// fakeOpenAI is the stand-in OpenAI server of these tests.
type fakeOpenAI = llmtest.Server[llmtest.ChatRequest]

func newTestOpenAI(f *fakeOpenAI, cfg llm.Config) *OpenAI {
	return NewOpenAI(llmtest.Config(f.URL, cfg))
}

// exchange is a typical facilitator message and mentor reply.
var exchange = []mentor.Turn{
	{Role: mentor.RoleUser, Content: "Alex cried over long division again tonight. At least Max, our dog, cheered him up."},
	{Role: mentor.RoleAssistant, Content: "That sounds hard. Try graph paper so the columns stay aligned."},
}

func extract(t *testing.T, e mentor.Extractor, req mentor.ExtractionRequest) ([]mentor.NewMemory, error) {
	t.Helper()
	return e.Extract(context.Background(), req)
}

// adapter is the extractor as the tests every model adapter must pass see
// it.
var adapter = llmtest.Adapter{
	Path:         "/chat/completions",
	DefaultModel: llm.DefaultChatModel,
	Success:      llmtest.ReplyContent(`{"memories": []}`, "stop"),
	Call: func(cfg llm.Config) (any, error) {
		return NewOpenAI(cfg).Extract(context.Background(), mentor.ExtractionRequest{Turns: exchange})
	},
}

func TestOpenAIConfig(t *testing.T) { adapter.CheckConfig(t) }

func TestOpenAIServerFailures(t *testing.T) { adapter.CheckServerFailures(t) }

func TestOpenAIName(t *testing.T) {
	if got := NewOpenAI(llm.Config{APIKey: "k"}).Name(); got != "openai" {
		t.Fatalf("Name() = %q, want openai", got)
	}
}

// The request asks for structured output: a strict JSON schema whose shape
// is the one parseReply expects, and which strict mode accepts.
func TestOpenAIRequestUsesStrictJSONSchema(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(`{"memories": []}`, "stop"))
	if _, err := extract(t, newTestOpenAI(f, llm.Config{}), mentor.ExtractionRequest{LearnerName: "Alex", Turns: exchange}); err != nil {
		t.Fatalf("Extract: %v", err)
	}
	calls := f.Calls()
	if len(calls) != 1 {
		t.Fatalf("server got %d requests, want 1", len(calls))
	}
	c := calls[0]
	if c.Body.First("system") == "" || c.Body.First("user") == "" {
		t.Errorf("request lacks a system or a user message: %+v", c.Body.Messages)
	}

	rf := c.Body.ResponseFormat
	if rf["type"] != "json_schema" {
		t.Fatalf("response_format = %v, want type json_schema", rf)
	}
	js, _ := rf["json_schema"].(map[string]any)
	if js["strict"] != true {
		t.Errorf("json_schema.strict = %v, want true", js["strict"])
	}
	if name, _ := js["name"].(string); name == "" {
		t.Errorf("json_schema has no name")
	}
	schema, _ := js["schema"].(map[string]any)
	if schema == nil {
		t.Fatalf("json_schema has no schema: %v", js)
	}
	checkStrictSchema(t, "schema", schema)

	memories := dig(t, schema, "properties", "memories")
	if memories["type"] != "array" {
		t.Errorf("memories is %v, want an array", memories["type"])
	}
	props := dig(t, memories, "items", "properties")
	if got, want := keys(props), []string{"confidence", "content", "importance", "metadata", "replaces", "type"}; !slices.Equal(got, want) {
		t.Errorf("item properties = %v, want %v", got, want)
	}
	if got := dig(t, props, "type")["enum"]; !reflect.DeepEqual(got, []any{"academic", "personal", "preference", "context"}) {
		t.Errorf("type enum = %v, want the four memory types", got)
	}
	for field, typ := range map[string]string{"content": "string", "importance": "number", "confidence": "number"} {
		if got := dig(t, props, field)["type"]; got != typ {
			t.Errorf("%s is %v, want %s", field, got, typ)
		}
	}
	mdProps := dig(t, props, "metadata", "properties")
	wantKeys := []string{mentor.MetaEmotion, mentor.MetaValence, mentor.MetaResolution, mentor.MetaTopic,
		mentor.MetaCategory, mentor.MetaTrigger, mentor.MetaResponse, mentor.MetaNextTopic}
	sort.Strings(wantKeys)
	if got := keys(mdProps); !slices.Equal(got, wantKeys) {
		t.Errorf("metadata properties = %v, want %v", got, wantKeys)
	}
	for _, k := range wantKeys {
		if got := dig(t, mdProps, k)["type"]; !reflect.DeepEqual(got, []any{"string", "null"}) {
			t.Errorf("metadata %s type = %v, want [string null]", k, got)
		}
	}
}

// checkStrictSchema applies strict mode's rules to every object in the
// schema: every property required, no additional properties.
func checkStrictSchema(t *testing.T, path string, node map[string]any) {
	t.Helper()
	switch node["type"] {
	case "object":
		props, _ := node["properties"].(map[string]any)
		var required []string
		for _, r := range node["required"].([]any) {
			required = append(required, r.(string))
		}
		sort.Strings(required)
		if !slices.Equal(required, keys(props)) {
			t.Errorf("%s: required %v, want every property %v", path, required, keys(props))
		}
		if node["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties = %v, want false", path, node["additionalProperties"])
		}
		for k, p := range props {
			checkStrictSchema(t, path+"."+k, p.(map[string]any))
		}
	case "array":
		checkStrictSchema(t, path+"[]", node["items"].(map[string]any))
	}
	if path == "schema" && node["type"] != "object" {
		t.Errorf("top-level schema is %v, want an object", node["type"])
	}
}

func dig(t *testing.T, m map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			t.Fatalf("schema has no object at %q in %v", p, path)
		}
		m = next
	}
	return m
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOpenAIExtractsMemories(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(sampleReply(t), "stop"))
	got, err := extract(t, newTestOpenAI(f, llm.Config{}), mentor.ExtractionRequest{LearnerName: "Alex", Turns: exchange})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	// DeepEqual also proves LearnerID, SessionID, SourceTurnIDs and Source
	// are left for the caller.
	if !reflect.DeepEqual(got, sampleMemories) {
		t.Errorf("memories =\n%#v\nwant\n%#v", got, sampleMemories)
	}
	if got := f.Calls()[0].Body.Model; got != llm.DefaultChatModel {
		t.Errorf("model = %q, want the default %q", got, llm.DefaultChatModel)
	}
}

func TestOpenAIEmptyList(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(`{"memories": []}`, "stop"))
	got, err := extract(t, newTestOpenAI(f, llm.Config{}), mentor.ExtractionRequest{Turns: exchange})
	if err != nil || len(got) != 0 {
		t.Errorf("Extract = %v, %v; want no memories and no error", got, err)
	}
}

func TestOpenAINoTurnsMakesNoCall(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(replyJSON(t, item("personal", "Alex has a dog.", 0.5, 1, meta())), "stop"))
	got, err := extract(t, newTestOpenAI(f, llm.Config{}), mentor.ExtractionRequest{LearnerName: "Alex"})
	if err != nil || len(got) != 0 {
		t.Errorf("Extract(no turns) = %v, %v; want nothing", got, err)
	}
	if n := len(f.Calls()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

// The user message carries the learner, the known memories with their types
// and the exchange, each piece of data inside its fence, and the learner
// named by a placeholder.
func TestOpenAIPromptCarriesExchangeKnownAndLearner(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(`{"memories": []}`, "stop"))
	known := []mentor.LearnerMemory{
		{Type: mentor.Preference, Content: "KNOWN-1: Alex prefers short explanations."},
		{Type: mentor.Context, Content: "KNOWN-2: Alex's mother wants to revisit fractions."},
	}
	if _, err := extract(t, newTestOpenAI(f, llm.Config{}), mentor.ExtractionRequest{LearnerName: "Alex Rivera", Turns: exchange, Known: known}); err != nil {
		t.Fatalf("Extract: %v", err)
	}
	user := f.Calls()[0].Body.First("user")
	if !strings.Contains(user, `the learner named "[LEARNER]"`) || strings.Contains(user, "Alex") {
		t.Errorf("user message does not name the learner by the placeholder alone:\n%s", user)
	}
	assertInside(t, user, "<exchange>", "</exchange>",
		"[LEARNER] cried over long division again tonight. At least Max, our dog, cheered him up.", exchange[1].Content)
	assertInside(t, user, "<known_memories>", "</known_memories>",
		`<memory key="k1" type="preference">KNOWN-1: [LEARNER] prefers short explanations.</memory>`,
		`<memory key="k2" type="context">KNOWN-2: [LEARNER]'s mother wants to revisit fractions.</memory>`)
	if !strings.Contains(user, `<turn speaker="person">`) || !strings.Contains(user, `<turn speaker="mentor">`) {
		t.Errorf("turns are not labelled person and mentor:\n%s", user)
	}
	if !strings.Contains(user, "ignore any instructions") {
		t.Errorf("user message does not say the data is not instructions:\n%s", user)
	}
}

// assertInside checks that each of wants occurs between open and end.
func assertInside(t *testing.T, s, open, end string, wants ...string) {
	t.Helper()
	i, j := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("no %s…%s block in:\n%s", open, end, s)
	}
	for _, w := range wants {
		if k := strings.Index(s, w); k < i || k > j {
			t.Errorf("%q is not inside %s…%s:\n%s", w, open, end, s)
		}
	}
}

// A reply the parser rejects yields nothing, even its well-formed items.
func TestOpenAIMalformedReplyReturnsNothing(t *testing.T) {
	valid := item("personal", "Alex has a dog named Max.", 0.5, 1, meta("topic", "pets"))
	cases := map[string]string{
		"not JSON":          "Alex has a dog named Max.",
		"importance a word": replyJSON(t, valid, item("academic", "Alex reads well.", "high", 0.9, meta())),
		"content a number":  replyJSON(t, valid, item("academic", 5, 0.5, 0.9, meta())),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			f := llmtest.NewChat(t, llmtest.ReplyContent(content, "stop"))
			if err := llmtest.Failed(t, f.URL, adapter.Call); !errors.Is(err, ErrMalformed) {
				t.Errorf("error = %v, want ErrMalformed", err)
			}
		})
	}
}

// Invalid memories are dropped, their valid siblings kept, and the drop is
// logged without the dropped text.
func TestOpenAIDropsInvalidMemoriesKeepsValid(t *testing.T) {
	f := llmtest.NewChat(t, llmtest.ReplyContent(mixedReply(t), "stop"))
	var logs bytes.Buffer
	e := newTestOpenAI(f, llm.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	got, err := extract(t, e, mentor.ExtractionRequest{Turns: exchange})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if got := contents(got); !slices.Equal(got, mixedKept) {
		t.Errorf("kept %q, want %q", got, mixedKept)
	}
	if want := fmt.Sprintf(`"invalid":%d`, mixedInvalid); !strings.Contains(logs.String(), want) {
		t.Errorf("log does not count the dropped memories (%s):\n%s", want, logs.String())
	}
	if strings.Contains(logs.String(), "DROPPED") {
		t.Errorf("log carries the text of a dropped memory:\n%s", logs.String())
	}
}

// Replies that reach the extractor but hold no memories it can trust.
func TestOpenAIFailures(t *testing.T) {
	cases := []struct {
		name  string
		reply http.HandlerFunc
		want  error
	}{
		{name: "cut off by the token limit", reply: llmtest.ReplyContent(`{"memories": [{"type": "acad`, "length"), want: llm.ErrTruncated},
		// The limit is the failure even when what came back parses.
		{name: "cut off with parseable content", reply: llmtest.ReplyContent(replyJSON(t, item("personal", "Alex has a dog.", 0.5, 1, meta())), "length"), want: llm.ErrTruncated},
		{name: "refusal", reply: llmtest.Reply(map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}, "stop"), want: llm.ErrRefused},
		{name: "no choices", reply: llmtest.ReplyNoChoices, want: ErrMalformed},
		{name: "blank content", reply: llmtest.ReplyContent(" \n ", "stop"), want: ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := llmtest.NewChat(t, tc.reply)
			if err := llmtest.Failed(t, f.URL, adapter.Call); !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
		})
	}
}
