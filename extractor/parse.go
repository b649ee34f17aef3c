package extractor

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"mentormemory/llm"
	"mentormemory/mentor"
)

// MaxMemories is the most memories kept from one exchange. One exchange
// rarely holds more than two or three facts worth keeping; a longer list
// means the model is transcribing rather than remembering.
const MaxMemories = 10

// ErrMalformed means the reply as a whole does not have the schema's shape.
// Nothing from such a reply is used: a model that broke the format may have
// broken the content too.
var ErrMalformed error = llm.Kind("model reply does not match the memory schema")

// reply is the schema's shape. Pointers tell a missing or null field from a
// zero, and typed fields make encoding/json reject a wrong JSON type, such
// as importance "high" or content 5.
type reply struct {
	Memories *[]*replyItem `json:"memories"`
}

type replyItem struct {
	Type       *string            `json:"type"`
	Content    *string            `json:"content"`
	Importance *float64           `json:"importance"`
	Confidence *float64           `json:"confidence"`
	Metadata   map[string]*string `json:"metadata"`
	// Replaces is the key of a known memory, as the prompt showed it
	// ("k3"); a reply without it replaces nothing.
	Replaces *string `json:"replaces"`
}

// parsed is a reply turned into memories the service accepts.
type parsed struct {
	memories []mentor.NewMemory
	// dropped says why each rejected memory was rejected.
	dropped []error
	// overLimit counts valid memories cut by MaxMemories.
	overLimit int
}

// parseReply checks a reply in two tiers.
//
// The shape is all or nothing: content that is not one JSON object with a
// "memories" array of objects, or an item missing type, content, importance
// or confidence, or any field of the wrong JSON type, fails the whole reply
// with ErrMalformed. A strict schema makes these impossible from a
// conforming server, so they mean the reply cannot be trusted.
//
// The values are judged one memory at a time: an item that has the right
// shape but that mentor.ValidateNewMemory rejects (an unknown type, blank
// or overlong content, importance or confidence outside 0..1, an overlong
// metadata value) is dropped and its valid siblings are kept.
//
// Null and blank metadata values are dropped, and so are metadata keys the
// schema does not name. Of more than MaxMemories valid memories, the most
// important are kept, in the reply's order.
//
// restore puts the real values back into the content and metadata before
// they are judged, since the length limits apply to what is stored.
func parseReply(content string, restore func(string) string) (parsed, error) {
	var r reply
	if err := json.Unmarshal([]byte(content), &r); err != nil {
		return parsed{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if r.Memories == nil {
		return parsed{}, fmt.Errorf("%w: no memories array", ErrMalformed)
	}
	items := make([]mentor.NewMemory, 0, len(*r.Memories))
	for i, it := range *r.Memories {
		if it == nil || it.Type == nil || it.Content == nil || it.Importance == nil || it.Confidence == nil {
			return parsed{}, fmt.Errorf("%w: memory %d lacks type, content, importance or confidence", ErrMalformed, i+1)
		}
		items = append(items, mentor.NewMemory{
			Type:       mentor.MemoryType(*it.Type),
			Content:    restore(*it.Content),
			Importance: *it.Importance,
			Confidence: *it.Confidence,
			Metadata:   knownMetadata(it.Metadata, restore),
			Replaces:   it.Replaces,
		})
	}

	var p parsed
	for i, m := range items {
		clean, err := mentor.ValidateNewMemory(m)
		if err != nil {
			p.dropped = append(p.dropped, fmt.Errorf("memory %d: %w", i+1, err))
			continue
		}
		p.memories = append(p.memories, clean)
	}
	p.memories, p.overLimit = mostImportant(p.memories, MaxMemories)
	return p, nil
}

// knownMetadata keeps the schema's keys that have a value, restored.
func knownMetadata(raw map[string]*string, restore func(string) string) mentor.Metadata {
	md := mentor.Metadata{}
	for _, key := range metadataKeys {
		if v := raw[key]; v != nil {
			md[key] = restore(*v)
		}
	}
	return md
}

// mostImportant keeps the n most important memories (the earlier one on a
// tie) in their original order, and says how many it cut.
func mostImportant(ms []mentor.NewMemory, n int) ([]mentor.NewMemory, int) {
	if len(ms) <= n {
		return ms, 0
	}
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ms[b].Importance, ms[a].Importance) })
	order = order[:n]
	slices.Sort(order)
	kept := make([]mentor.NewMemory, n)
	for i, j := range order {
		kept[i] = ms[j]
	}
	return kept, len(ms) - n
}

// knownKey is how the prompt names the i-th known memory it shows, shorter
// and harder to garble than its id.
func knownKey(i int) string { return fmt.Sprintf("k%d", i+1) }

// resolveReplaces turns each memory's Replaces from the key of a known
// memory, as the prompt showed them, into that memory's id. A key the
// prompt never showed replaces nothing; it is counted, for the log.
func resolveReplaces(memories []mentor.NewMemory, shown []mentor.LearnerMemory) (unknown int) {
	ids := make(map[string]string, len(shown))
	for i, m := range shown {
		ids[knownKey(i)] = m.ID
	}
	for i := range memories {
		key := memories[i].Replaces
		if key == nil {
			continue
		}
		if id, ok := ids[strings.TrimSpace(*key)]; ok {
			memories[i].Replaces = &id
			continue
		}
		memories[i].Replaces = nil
		unknown++
	}
	return unknown
}
