package mentor

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzValidateMetadata checks metadata as a client sends it (a JSON
// object) plus one entry set directly, so that what JSON cannot carry (NaN,
// invalid UTF-8, lists) is tried too.
func FuzzValidateMetadata(f *testing.F) {
	f.Fuzz(func(t *testing.T, object []byte, key, text string, number float64, kind byte) {
		m := metadataFrom(object, key, text, number, kind)
		want, acceptable := expectedMetadata(m)

		clean, err := ValidateMetadata(m)
		if !accepted(t, err, acceptable, m) {
			return
		}
		requireMetadata(t, clean, want)
	})
}

func FuzzValidateNewMemory(f *testing.F) {
	f.Fuzz(func(t *testing.T, typ, content string, importance, confidence float64, object []byte, key, text string) {
		learner := "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11"
		in := NewMemory{
			LearnerID: &learner, Type: MemoryType(typ), Content: content,
			Importance: importance, Confidence: confidence,
			Metadata: metadataFrom(object, key, text, 0, 's'),
			Source:   SourceAdded,
		}
		wantType := MemoryType(strings.ToLower(strings.TrimSpace(typ)))
		wantMetadata, metadataOK := expectedMetadata(in.Metadata)
		acceptable := slices.Contains(MemoryTypes, wantType) &&
			fitText(strings.TrimSpace(content), MaxMemoryChars) &&
			inUnit(importance) && inUnit(confidence) && metadataOK

		m, err := ValidateNewMemory(in)
		if !accepted(t, err, acceptable, in) {
			return
		}
		if m.Type != wantType || m.Content != strings.TrimSpace(content) ||
			m.Importance != importance || m.Confidence != confidence ||
			m.LearnerID != &learner || m.Source != SourceAdded {
			t.Fatalf("got %#v from %#v", m, in)
		}
		if !fitText(m.Content, MaxMemoryChars) || !inUnit(m.Importance) || !inUnit(m.Confidence) {
			t.Fatalf("out of limits: %#v", m)
		}
		requireMetadata(t, m.Metadata, wantMetadata)
	})
}

// metadataFrom decodes object (when it is a JSON object) and sets key to a
// value of the given kind: 's' text, 'n' number, 'b' a boolean, '0' null,
// 'l' a list, anything else a nested object. An empty key sets nothing.
func metadataFrom(object []byte, key, text string, number float64, kind byte) Metadata {
	m := Metadata{}
	if json.Unmarshal(object, &m) != nil || m == nil {
		m = Metadata{}
	}
	if key == "" {
		return m
	}
	switch kind {
	case 's':
		m[key] = text
	case 'n':
		m[key] = number
	case 'b':
		m[key] = text != ""
	case '0':
		m[key] = nil
	case 'l':
		m[key] = []any{text}
	default:
		m[key] = map[string]any{key: text}
	}
	return m
}

// expectedMetadata is what ValidateMetadata should make of m, and whether
// it should take it at all.
func expectedMetadata(m Metadata) (Metadata, bool) {
	if len(m) > MaxMetadataKeys {
		return nil, false
	}
	want := Metadata{}
	for key, value := range m {
		if !metadataKeyOK(key) {
			return nil, false
		}
		switch v := value.(type) {
		case nil:
		case bool:
			want[key] = v
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, false
			}
			want[key] = v
		case string:
			v = strings.TrimSpace(v)
			if !fitOptionalText(v, MaxMetadataValueChar) {
				return nil, false
			}
			if key == MetaEmotion || key == MetaValence || key == MetaCategory {
				v = strings.ToLower(v)
			}
			if v != "" {
				want[key] = v
			}
		default:
			return nil, false
		}
	}
	return want, true
}

// metadataKeyOK: lower-case ASCII letters, digits and _, starting with a
// letter, at most MaxMetadataKeyChars.
func metadataKeyOK(key string) bool {
	if key == "" || len(key) > MaxMetadataKeyChars || key[0] < 'a' || key[0] > 'z' {
		return false
	}
	for _, c := range []byte(key) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func requireMetadata(t *testing.T, got, want Metadata) {
	t.Helper()
	if got == nil || !maps.Equal(got, want) {
		t.Fatalf("metadata: got %#v, want %#v", got, want)
	}
	if len(got) > MaxMetadataKeys {
		t.Fatalf("metadata has %d keys", len(got))
	}
	for key, value := range got {
		if !metadataKeyOK(key) {
			t.Fatalf("metadata key %q kept", key)
		}
		if s, ok := value.(string); ok && !fitText(s, MaxMetadataValueChar) {
			t.Fatalf("metadata %s: %q breaks a limit", key, s)
		}
	}
	for _, key := range lowerCaseMetadata {
		if s, ok := got[key].(string); ok && s != strings.ToLower(s) {
			t.Fatalf("metadata %s: %q is not lower case", key, s)
		}
	}
}

func inUnit(v float64) bool { return v >= 0 && v <= 1 }
