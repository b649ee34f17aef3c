package postgres

import (
	"testing"

	"mentormemory/memory"
)

func TestAlreadySent(t *testing.T) {
	u := func(s string) memory.Turn { return memory.Turn{Role: memory.RoleUser, Content: s} }
	a := func(s string) memory.Turn { return memory.Turn{Role: memory.RoleAssistant, Content: s} }
	stored := []memory.Turn{u("q1"), a("a1"), u("q2"), a("a2")}
	cases := []struct {
		name   string
		tail   []memory.Turn
		posted []memory.Turn
		want   int
	}{
		{"nothing stored", nil, []memory.Turn{u("q1"), a("a1")}, 0},
		{"new exchange", stored, []memory.Turn{u("q3"), a("a3")}, 0},
		{"retry of the last exchange", stored, []memory.Turn{u("q2"), a("a2")}, 2},
		{"whole history plus a new exchange", stored, append(append([]memory.Turn{}, stored...), u("q3"), a("a3")), 4},
		{"whole history, nothing new", stored, stored, 4},
		{"history longer than the stored tail", stored[2:], append(append([]memory.Turn{}, stored...), u("q3")), 4},
		{"same words, other role", []memory.Turn{u("ok")}, []memory.Turn{a("ok")}, 0},
	}
	for _, tc := range cases {
		if got := alreadySent(tc.tail, tc.posted); got != tc.want {
			t.Errorf("%s: alreadySent = %d, want %d", tc.name, got, tc.want)
		}
	}
}
