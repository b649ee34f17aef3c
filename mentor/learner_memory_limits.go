package mentor

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on learner memories. A memory is one short fact, not a document.
const (
	MaxMemoryChars       = 1000
	MaxMetadataKeys      = 16
	MaxMetadataKeyChars  = 40
	MaxMetadataValueChar = 200
	MaxRecallMessageChar = 4000
	DefaultMemoryList    = 50
	MaxMemoryList        = 200
	MaxMemoryOffset      = 100_000
	// MaxMemoryHistory bounds a memory's history as listed.
	MaxMemoryHistory = 500
	// Consolidation runs listed at once.
	DefaultConsolidationList = 20
	MaxConsolidationList     = 100
	// A person adding a memory knows it; the importance is theirs to say.
	DefaultAddedConfidence = 1.0
	DefaultImportance      = 0.5
)

var metadataKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Metadata values compared by filters are kept in lower case.
var lowerCaseMetadata = []string{MetaEmotion, MetaValence, MetaCategory}

// ParseMemoryType checks a memory type.
func ParseMemoryType(raw string) (MemoryType, error) {
	t := MemoryType(strings.ToLower(strings.TrimSpace(raw)))
	if !slices.Contains(MemoryTypes, t) {
		return "", Errorf(CodeInvalid, "type must be one of academic, personal, preference, context")
	}
	return t, nil
}

// parseTypeFilter checks the type a query is narrowed to; "" is every
// type.
func parseTypeFilter(t MemoryType) (MemoryType, error) {
	if t == "" {
		return "", nil
	}
	return ParseMemoryType(string(t))
}

// ValidateNewMemory checks a memory to store and returns it cleaned.
func ValidateNewMemory(m NewMemory) (NewMemory, error) {
	var err error
	if m.Type, err = ParseMemoryType(string(m.Type)); err != nil {
		return m, err
	}
	if m.Content, err = validateMemoryContent(m.Content); err != nil {
		return m, err
	}
	if err := checkUnit("importance", m.Importance); err != nil {
		return m, err
	}
	if err := checkUnit("confidence", m.Confidence); err != nil {
		return m, err
	}
	m.Metadata, err = ValidateMetadata(m.Metadata)
	return m, err
}

// ValidatePatch checks a correction; at least one field must change.
func ValidatePatch(p MemoryPatch) (MemoryPatch, error) {
	if !p.Confirm && !p.changesFields() {
		return p, Errorf(CodeInvalid, "Nothing to change: send type, content, importance, confidence, metadata or confirm")
	}
	if p.Type != nil {
		t, err := ParseMemoryType(string(*p.Type))
		if err != nil {
			return p, err
		}
		p.Type = &t
	}
	if p.Content != nil {
		content, err := validateMemoryContent(*p.Content)
		if err != nil {
			return p, err
		}
		p.Content = &content
	}
	for name, v := range map[string]*float64{"importance": p.Importance, "confidence": p.Confidence} {
		if v != nil {
			if err := checkUnit(name, *v); err != nil {
				return p, err
			}
		}
	}
	if p.Metadata != nil {
		metadata, err := ValidateMetadata(p.Metadata)
		if err != nil {
			return p, err
		}
		p.Metadata = metadata
	}
	return p, nil
}

func validateMemoryContent(content string) (string, error) {
	return requiredText(content, "Memory content", MaxMemoryChars)
}

func checkUnit(name string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return Errorf(CodeInvalid, "%s must be between 0 and 1", name)
	}
	return nil
}

// ValidateMetadata checks a memory's metadata: a flat object of short
// strings, numbers and booleans. Null values are dropped; emotion, valence
// and category are lower-cased so filters match however they were written.
func ValidateMetadata(m Metadata) (Metadata, error) {
	clean := Metadata{}
	if len(m) > MaxMetadataKeys {
		return nil, Errorf(CodeInvalid, "metadata has too many keys (at most %d)", MaxMetadataKeys)
	}
	for key, value := range m {
		if len(key) > MaxMetadataKeyChars || !metadataKey.MatchString(key) {
			return nil, Errorf(CodeInvalid, "metadata key %q must be lower-case letters, digits and _ (at most %d characters)",
				truncate(key, MaxMetadataKeyChars), MaxMetadataKeyChars)
		}
		switch v := value.(type) {
		case nil:
		case bool:
			clean[key] = v
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, Errorf(CodeInvalid, "metadata %s must be a finite number", key)
			}
			clean[key] = v
		case string:
			v = strings.TrimSpace(v)
			if utf8.RuneCountInString(v) > MaxMetadataValueChar {
				return nil, Errorf(CodeInvalid, "metadata %s is too long (at most %d characters)", key, MaxMetadataValueChar)
			}
			if err := checkText(v, "metadata "+key); err != nil {
				return nil, err
			}
			if slices.Contains(lowerCaseMetadata, key) {
				v = strings.ToLower(v)
			}
			if v != "" {
				clean[key] = v
			}
		default:
			return nil, Errorf(CodeInvalid, "metadata %s must be a string, a number or a boolean", key)
		}
	}
	return clean, nil
}

// ValidateFilter checks a memory filter and lower-cases its values.
func ValidateFilter(f MemoryFilter) (MemoryFilter, error) {
	var err error
	if f.Type, err = parseTypeFilter(f.Type); err != nil {
		return f, err
	}
	for name, v := range map[string]*string{"emotion": &f.Emotion, "valence": &f.Valence, "category": &f.Category, "topic": &f.Topic} {
		*v = strings.ToLower(strings.TrimSpace(*v))
		if utf8.RuneCountInString(*v) > MaxMetadataValueChar {
			return f, Errorf(CodeInvalid, "%s filter too long (at most %d characters)", name, MaxMetadataValueChar)
		}
		if err := checkText(*v, name+" filter"); err != nil {
			return f, err
		}
	}
	return f, nil
}

// ValidateListQuery checks a listing's paging and filter.
func ValidateListQuery(q ListQuery) (ListQuery, error) {
	var err error
	if q.Filter, err = ValidateFilter(q.Filter); err != nil {
		return q, err
	}
	if q.Limit, err = pageLimit(q.Limit, DefaultMemoryList, MaxMemoryList); err != nil {
		return q, err
	}
	return q, pageOffset(q.Offset, MaxMemoryOffset)
}

// ValidateRecallMessage checks the message recall ranks memories for; it
// may be empty (the most important memories then come first).
func ValidateRecallMessage(message string) (string, error) {
	message = strings.TrimSpace(message)
	if utf8.RuneCountInString(message) > MaxRecallMessageChar {
		return "", Errorf(CodeInvalid, "message too long (at most %d characters)", MaxRecallMessageChar)
	}
	return message, checkText(message, "message")
}

// ParseMemoryID checks a memory id.
func ParseMemoryID(raw string) (string, error) {
	id, err := ParseLearnerID(raw)
	if err != nil || id == nil {
		return "", Errorf(CodeInvalid, "memory id must be a uuid")
	}
	return *id, nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…", string([]rune(s)[:n]))
}

// recallQueryStart is how much of a long message's start recall reads: the
// rest of its room goes to the words only the rest of the message has.
const recallQueryStart = 3000

// RecallMessage is the part of a chat message recall ranks memories for:
// the message itself up to MaxRecallMessageChar; a longer one (a pasted
// school report) is its start, cut at a word, then the distinct words of
// the rest that the start does not have, in their order, as many as fit.
// So a long message is answered with memory instead of refused, and what
// it is about past its start still counts.
func RecallMessage(message string) string {
	message = strings.TrimSpace(message)
	runes := []rune(message)
	if len(runes) <= MaxRecallMessageChar {
		return message
	}
	start := string(runes[:recallQueryStart])
	if cut := strings.LastIndexAny(start, " \t\n"); cut > 0 {
		start = start[:cut]
	}
	seen := contentWords(start)
	var b strings.Builder
	b.WriteString(start)
	room := MaxRecallMessageChar - utf8.RuneCountInString(start)
	for _, w := range words(string(runes[utf8.RuneCountInString(start):])) {
		// Compared as recall compares words: lower case, stop words out,
		// plurals folded.
		key := ""
		for k := range contentWords(w) {
			key = k
		}
		if key == "" || seen[key] {
			continue
		}
		if room -= utf8.RuneCountInString(w) + 1; room < 0 {
			break
		}
		seen[key] = true
		b.WriteString(" " + w)
	}
	return b.String()
}
