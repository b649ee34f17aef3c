package faults

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
	"mentormemory/mentor"
)

// answerLimit bounds every request: a request that gets no answer within it
// counts as a hang, which the service must never do.
const answerLimit = 10 * time.Second

// missing ends a test whose prerequisite (PostgreSQL) is not there: CI must
// never pass by skipping, so under CI=true it fails; elsewhere it skips.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// waitFor polls done until it is true, and fails the test with what when
// the deadline passes first. Every wait in the suite is bounded by it.
func waitFor(t testing.TB, limit time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// connect opens a superuser connection, closed when the test ends.
func connect(t testing.TB, databaseURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		t.Fatalf("connect as superuser: %v", err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	return db
}

// conversation is one facilitator's conversation about one learner, or the
// general one when learnerID is empty.
type conversation struct {
	who       apptest.User
	learnerID string
}

func (c conversation) String() string {
	if c.learnerID == "" {
		return "facilitator " + c.who.ID + ", general"
	}
	return "facilitator " + c.who.ID + ", learner " + c.learnerID
}

// exchange is one facilitator message and the mentor's reply, each with the
// client turn id the web client would give it, so resending is harmless.
type exchange struct {
	conv  conversation
	turns []mentor.Turn
}

func newExchange(conv conversation, id, question, answer string) exchange {
	return exchange{conv: conv, turns: []mentor.Turn{
		{ID: id + "-q", Role: mentor.RoleUser, Content: question},
		{ID: id + "-a", Role: mentor.RoleAssistant, Content: answer},
	}}
}

// attempt is one post and what came of it.
type attempt struct {
	x                exchange
	started, settled time.Time
	answer           answer
}

// answer is what a POST /api/conversation-memory got back.
type answer struct {
	apptest.Response
	postAnswer
}

// postAnswer is the JSON body of an answer, as far as the tests read it.
type postAnswer struct {
	Success      bool   `json:"success"`
	Error        string `json:"error"`
	TurnsAdded   int    `json:"turns_added"`
	Conversation struct {
		Summary      string `json:"summary"`
		SummaryStale bool   `json:"summary_stale"`
	} `json:"conversation_update"`
}

func (a answer) acknowledged() bool { return a.Err == nil && a.Status >= 200 && a.Status < 300 }

// isRetryableError reports whether a is the documented 503: a JSON error
// {"success": false, "error": "…"} with Retry-After.
func (a answer) isRetryableError() bool {
	return a.Err == nil && a.Status == http.StatusServiceUnavailable && !a.Success &&
		strings.TrimSpace(a.Error) != "" && a.Header.Get("Retry-After") != "" && json.Valid(a.Raw)
}

// newClient returns a client of the service at baseURL whose every request
// is bounded by answerLimit. Each server (and each run of one) gets its own,
// so no connection outlives the process it was made to.
func newClient(t testing.TB, baseURL string) apptest.Client {
	t.Helper()
	transport := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(transport.CloseIdleConnections)
	return apptest.Client{URL: baseURL, HTTP: &http.Client{Transport: transport, Timeout: answerLimit}}
}

// postExchange posts x to the service as its facilitator. It runs on
// goroutines: an answer that does not come is in the answer's Err, never
// the end of the test.
func postExchange(t testing.TB, client apptest.Client, x exchange) answer {
	a := answer{Response: client.Do(t, apptest.Request{Method: http.MethodPost, Path: "/api/conversation-memory",
		Token: x.conv.who.Token, Body: apptest.ConversationBody(x.conv.learnerID, x.turns)})}
	if a.Err == nil {
		a.Err = json.Unmarshal(a.Raw, &a.postAnswer)
	}
	return a
}

// checkStoredOnce fails unless each turn of exchanges is stored exactly
// once in its conversation, nothing else is stored, and each conversation's
// active and archived turn counts add up to the turns it stored.
func checkStoredOnce(t *testing.T, db *pgx.Conn, exchanges []exchange) {
	t.Helper()
	perConversation := map[conversation]int{}
	for _, x := range exchanges {
		perConversation[x.conv] += len(x.turns)
		for _, turn := range x.turns {
			if n := apptest.Count(t, db, `select count(*) from public.conversation_turns
				where facilitator_id = $1::uuid and learner_id is not distinct from nullif($2, '')::uuid
					and client_turn_id = $3 and role = $4 and content = $5`,
				x.conv.who.ID, x.conv.learnerID, turn.ID, turn.Role, turn.Content); n != 1 {
				t.Errorf("turn %s is stored %d times, want exactly once", turn.ID, n)
			}
		}
	}
	for conv, want := range perConversation {
		scope := []any{conv.who.ID, conv.learnerID}
		const same = `facilitator_id = $1::uuid and learner_id is not distinct from nullif($2, '')::uuid`
		stored := apptest.Count(t, db, `select count(*) from public.conversation_turns where `+same, scope...)
		active := apptest.Count(t, db, `select coalesce(sum(turn_count), 0) from public.conversation_updates where `+same, scope...)
		archived := apptest.Count(t, db, `select coalesce(sum(turn_count), 0) from public.conversation_history_archive where `+same, scope...)
		if stored != want {
			t.Errorf("conversation %v stores %d turns, want the %d distinct turns posted", conv, stored, want)
		}
		if active+archived != stored {
			t.Errorf("conversation %v counts %d active + %d archived turns, but stores %d", conv, active, archived, stored)
		}
	}
}
