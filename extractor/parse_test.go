package extractor

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mentormemory/mentor"
)

// meta is a metadata object as a strict reply carries it: every key present,
// null unless given in kv (key, value, key, value...).
// asSent leaves a reply's text as the model wrote it: these replies hold no
// placeholders.
func asSent(text string) string { return text }

func meta(kv ...string) map[string]any {
	m := map[string]any{}
	for _, k := range []string{"emotion", "valence", "resolution", "topic", "category", "trigger", "response", "next_topic"} {
		m[k] = nil
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// item is one memory of a reply; fields are any so tests can send wrong types.
func item(typ, content, importance, confidence any, metadata any) map[string]any {
	return map[string]any{"type": typ, "content": content, "importance": importance, "confidence": confidence, "metadata": metadata}
}

// replyJSON is a reply's content: {"memories": items}.
func replyJSON(t *testing.T, items ...map[string]any) string {
	t.Helper()
	if items == nil {
		items = []map[string]any{}
	}
	raw, err := json.Marshal(map[string]any{"memories": items})
	if err != nil {
		t.Fatalf("marshal reply: %v", err)
	}
	return string(raw)
}

// sampleReply is a typical reply that needs cleaning: spaces around the
// content, a capitalised type and emotion, null metadata.
func sampleReply(t *testing.T) string {
	t.Helper()
	return replyJSON(t,
		item("academic", "  Alex finds long division hard. ", 0.8, 0.9, meta("emotion", "Frustrated", "valence", "negative", "resolution", "unresolved", "topic", "long division")),
		item("Personal", "Alex has a dog named Max.", 0.5, 1, meta("topic", "pets")),
	)
}

// sampleMemories is sampleReply cleaned: trimmed, type and emotion
// lower-cased, nulls dropped, and nothing the caller fills in.
var sampleMemories = []mentor.NewMemory{
	{Type: mentor.Academic, Content: "Alex finds long division hard.", Importance: 0.8, Confidence: 0.9,
		Metadata: mentor.Metadata{"emotion": "frustrated", "valence": "negative", "resolution": "unresolved", "topic": "long division"}},
	{Type: mentor.Personal, Content: "Alex has a dog named Max.", Importance: 0.5, Confidence: 1,
		Metadata: mentor.Metadata{"topic": "pets"}},
}

func TestParseReplyKeepsValidMemories(t *testing.T) {
	p, err := parseReply(sampleReply(t), asSent)
	if err != nil {
		t.Fatalf("parseReply: %v", err)
	}
	if !reflect.DeepEqual(p.memories, sampleMemories) {
		t.Errorf("memories =\n%#v\nwant\n%#v", p.memories, sampleMemories)
	}
	if len(p.dropped) != 0 || p.overLimit != 0 {
		t.Errorf("dropped %v, over limit %d; want nothing dropped", p.dropped, p.overLimit)
	}
}

func TestParseReplyEmptyList(t *testing.T) {
	p, err := parseReply(`{"memories": []}`, asSent)
	if err != nil || len(p.memories) != 0 {
		t.Errorf("parseReply(empty list) = %v, %v; want no memories and no error", p.memories, err)
	}
}

// Anything off the schema's shape fails the whole reply, valid siblings and
// all: each case below holds one valid memory next to the fault.
func TestParseReplyMalformed(t *testing.T) {
	valid := `{"type":"personal","content":"Alex has a dog named Max.","importance":0.5,"confidence":1,"metadata":{}}`
	cases := map[string]string{
		"not JSON":                   `Sure! Alex has a dog named Max.`,
		"cut off":                    `{"memories": [` + valid + `, {"type":"acad`,
		"trailing text":              `{"memories": [` + valid + `]} Hope this helps!`,
		"top-level array":            `[` + valid + `]`,
		"no memories key":            `{"facts": [` + valid + `]}`,
		"memories null":              `{"memories": null}`,
		"memories not an array":      `{"memories": ` + valid + `}`,
		"item not an object":         `{"memories": [` + valid + `, "Alex likes chess"]}`,
		"item null":                  `{"memories": [` + valid + `, null]}`,
		"importance a word":          `{"memories": [` + valid + `, {"type":"academic","content":"Alex reads well.","importance":"high","confidence":0.9,"metadata":{}}]}`,
		"content a number":           `{"memories": [` + valid + `, {"type":"academic","content":5,"importance":0.5,"confidence":0.9,"metadata":{}}]}`,
		"type a number":              `{"memories": [` + valid + `, {"type":1,"content":"Alex reads well.","importance":0.5,"confidence":0.9,"metadata":{}}]}`,
		"confidence a bool":          `{"memories": [` + valid + `, {"type":"academic","content":"Alex reads well.","importance":0.5,"confidence":true,"metadata":{}}]}`,
		"importance missing":         `{"memories": [` + valid + `, {"type":"academic","content":"Alex reads well.","confidence":0.9,"metadata":{}}]}`,
		"content null":               `{"memories": [` + valid + `, {"type":"academic","content":null,"importance":0.5,"confidence":0.9,"metadata":{}}]}`,
		"metadata value a number":    `{"memories": [` + valid + `, {"type":"academic","content":"Alex reads well.","importance":0.5,"confidence":0.9,"metadata":{"topic":7}}]}`,
		"metadata an array":          `{"memories": [` + valid + `, {"type":"academic","content":"Alex reads well.","importance":0.5,"confidence":0.9,"metadata":["reading"]}]}`,
		"importance beyond a number": `{"memories": [` + valid + `, {"type":"academic","content":"Alex reads well.","importance":1e999,"confidence":0.9,"metadata":{}}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := parseReply(content, asSent)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error = %v, want ErrMalformed", err)
			}
			if len(p.memories) != 0 {
				t.Errorf("returned %d memories from a malformed reply, want none", len(p.memories))
			}
		})
	}
}

// mixedReply holds two valid memories among six well-shaped ones the
// service rejects; the text of each rejected one starts with DROPPED.
func mixedReply(t *testing.T) string {
	t.Helper()
	return replyJSON(t,
		item("academic", "Alex mixes up b and d.", 0.7, 0.9, meta("topic", "reading")),
		item("hobby", "DROPPED: Alex collects stamps.", 0.5, 0.9, meta()),
		item("personal", "   ", 0.5, 0.9, meta()),
		item("personal", "DROPPED: Alex plays chess.", 1.5, 0.9, meta()),
		item("personal", "DROPPED: Alex plays the violin.", 0.5, -0.1, meta()),
		item("personal", "DROPPED: "+strings.Repeat("x", mentor.MaxMemoryChars), 0.5, 0.9, meta()),
		item("preference", "DROPPED: Alex likes a quiet room.", 0.5, 0.9, meta("topic", strings.Repeat("y", mentor.MaxMetadataValueChar+1))),
		item("context", "Alex's father wants to revisit spelling next time.", 0.4, 0.9, meta("next_topic", "spelling")),
	)
}

// The valid memories of mixedReply, and how many it holds that are not.
var (
	mixedKept    = []string{"Alex mixes up b and d.", "Alex's father wants to revisit spelling next time."}
	mixedInvalid = 6
)

func contents(ms []mentor.NewMemory) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

// A well-shaped memory the service would reject is dropped on its own.
func TestParseReplyDropsInvalidMemories(t *testing.T) {
	p, err := parseReply(mixedReply(t), asSent)
	if err != nil {
		t.Fatalf("parseReply: %v", err)
	}
	if got := contents(p.memories); !slices.Equal(got, mixedKept) {
		t.Errorf("kept %q, want only the valid %q", got, mixedKept)
	}
	if len(p.dropped) != mixedInvalid {
		t.Errorf("dropped %d (%v), want %d", len(p.dropped), p.dropped, mixedInvalid)
	}
}

func TestParseReplyMetadata(t *testing.T) {
	t.Run("nulls, blanks and unknown keys are dropped", func(t *testing.T) {
		md := meta("emotion", "  ", "valence", "Positive", "category", "Emotional_Response", "trigger", "timed tests", "response", "freezes")
		md["mood"] = "grumpy"
		p, err := parseReply(replyJSON(t, item("preference", "Alex freezes during timed tests.", 0.8, 0.9, md)), asSent)
		if err != nil {
			t.Fatalf("parseReply: %v", err)
		}
		want := mentor.Metadata{"valence": "positive", "category": "emotional_response", "trigger": "timed tests", "response": "freezes"}
		if len(p.memories) != 1 || !reflect.DeepEqual(p.memories[0].Metadata, want) {
			t.Errorf("memories = %#v, want one with metadata %#v", p.memories, want)
		}
	})
	t.Run("missing or null metadata is empty", func(t *testing.T) {
		p, err := parseReply(`{"memories": [{"type":"personal","content":"Alex has a cat.","importance":0.5,"confidence":0.9},
			{"type":"personal","content":"Alex has a brother.","importance":0.5,"confidence":0.9,"metadata":null}]}`, asSent)
		if err != nil {
			t.Fatalf("parseReply: %v", err)
		}
		if len(p.memories) != 2 {
			t.Fatalf("kept %d memories, want 2", len(p.memories))
		}
		for _, m := range p.memories {
			if m.Metadata == nil || len(m.Metadata) != 0 {
				t.Errorf("metadata of %q = %#v, want an empty map", m.Content, m.Metadata)
			}
		}
	})
}

func TestParseReplyKeepsTheMostImportant(t *testing.T) {
	importance := []float64{0.5, 0.9, 0.1, 0.6, 0.7, 0.2, 0.8, 0.6, 0.5, 0.9, 0.4, 0.3}
	var items []map[string]any
	for i, imp := range importance {
		items = append(items, item("personal", fmt.Sprintf("fact %d", i), imp, 0.9, meta()))
	}
	p, err := parseReply(replyJSON(t, items...), asSent)
	if err != nil {
		t.Fatalf("parseReply: %v", err)
	}
	got := contents(p.memories)
	// facts 2 (0.1) and 5 (0.2) are the least important; the rest keep
	// the reply's order.
	want := []string{"fact 0", "fact 1", "fact 3", "fact 4", "fact 6", "fact 7", "fact 8", "fact 9", "fact 10", "fact 11"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kept %q,\nwant %q", got, want)
	}
	if p.overLimit != 2 {
		t.Errorf("overLimit = %d, want 2", p.overLimit)
	}
}
