package mentor

import (
	"strings"
	"testing"
)

func TestValidateTurnsTrimsAndChecks(t *testing.T) {
	got, err := ValidateTurns([]Turn{{ID: " 7 ", Role: RoleUser, Content: "  hello  "}})
	if err != nil || got[0].Content != "hello" || got[0].ID != "7" {
		t.Fatalf("got %+v, %v", got, err)
	}
	bad := map[string][]Turn{
		"Conversation turns required":                nil,
		`Turn 1: role must be "user" or "assistant"`: {{Role: "system", Content: "x"}},
		"Turn 2: content required":                   {{Role: RoleUser, Content: "x"}, {Role: RoleAssistant, Content: "\n"}},
		"Turn 1: content too long":                   {{Role: RoleUser, Content: strings.Repeat("é", MaxTurnChars+1)}},
		"Turn content must not contain NUL":          {{Role: RoleUser, Content: "a\x00"}},
		"Turn content must be valid UTF-8":           {{Role: RoleUser, Content: "a\xff"}},
		"Turn 1: id too long":                        {{ID: strings.Repeat("i", MaxTurnIDChars+1), Role: RoleUser, Content: "x"}},
	}
	for want, turns := range bad {
		if _, err := ValidateTurns(turns); err == nil || !strings.HasPrefix(ErrorMessage(err), want) || ErrorCode(err) != CodeInvalid {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

func TestParseLearnerID(t *testing.T) {
	for _, raw := range []string{"", "null", "  "} {
		if id, err := ParseLearnerID(raw); id != nil || err != nil {
			t.Errorf("%q: want general, got %v %v", raw, id, err)
		}
	}
	id, err := ParseLearnerID("0D9F0B1E-4A52-4A53-9D8E-2F7A1F0C6B11")
	if err != nil || *id != "0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11" {
		t.Fatalf("canonical form: %v %v", id, err)
	}
	for _, raw := range []string{"emma", "{0d9f0b1e-4a52-4a53-9d8e-2f7a1f0c6b11}", "0d9f0b1e4a524a539d8e2f7a1f0c6b11", "1; drop table learners"} {
		if _, err := ParseLearnerID(raw); err == nil {
			t.Errorf("%q accepted", raw)
		}
	}
}
