package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/memory"
)

// env is one running service on a fresh database.
type env struct {
	t    *testing.T
	pool *pgxpool.Pool
	url  string
}

func newEnv(t *testing.T, opts apptest.Options) *env {
	t.Helper()
	svc := apptest.Start(t, opts)
	return &env{t: t, pool: svc.Pool, url: svc.URL}
}

// user is a facilitator with a valid token.
type user struct {
	id    string
	token string
}

func (e *env) newUser() user {
	e.t.Helper()
	id := uuid.NewString()
	if _, err := e.pool.Exec(context.Background(),
		`insert into auth.users (id, email) values ($1::uuid, $2)`, id, id+"@example.com"); err != nil {
		e.t.Fatal(err)
	}
	token, err := auth.MintHS256(apptest.Secret, id, "", time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return user{id: id, token: token}
}

// newLearner creates a learner for u through the API.
func (e *env) newLearner(u user, name string) string {
	e.t.Helper()
	res := e.call(u.token, http.MethodPost, "/api/learners", map[string]any{"name": name})
	res.wantStatus(http.StatusCreated)
	return res.body["learner"].(map[string]any)["id"].(string)
}

type response struct {
	t      *testing.T
	status int
	raw    []byte
	body   map[string]any
	// contentLength is the answer's Content-Length, -1 when it came
	// chunked.
	contentLength int64
}

func (r response) wantStatus(status int) response {
	r.t.Helper()
	if r.status != status {
		r.t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
	return r
}

// wantError checks the error shape and message.
func (r response) wantError(status int, message string) {
	r.t.Helper()
	r.wantStatus(status)
	if r.body["success"] != false || r.body["error"] != message {
		r.t.Fatalf("body %s, want error %q", r.raw, message)
	}
}

// call sends a request; body may be nil, a string (sent as is) or a value
// encoded as JSON.
func (e *env) call(token, method, path string, body any) response {
	e.t.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		reader = bytes.NewBufferString(b)
	case []byte:
		reader = bytes.NewReader(b)
	default:
		encoded, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequest(method, e.url+path, reader)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := response{t: e.t, status: resp.StatusCode, raw: raw, contentLength: resp.ContentLength}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("response is not a JSON object: %s", raw)
		}
	}
	return r
}

// post posts turns for a learner ("" for general) and returns the response.
func (e *env) post(u user, learnerID string, turns ...memory.Turn) response {
	e.t.Helper()
	body := map[string]any{"conversation_turns": turns, "learner_id": nil}
	if learnerID != "" {
		body["learner_id"] = learnerID
	}
	return e.call(u.token, http.MethodPost, "/api/conversation-memory", body)
}

func exchange(question, answer string) []memory.Turn {
	return []memory.Turn{{Role: memory.RoleUser, Content: question}, {Role: memory.RoleAssistant, Content: answer}}
}

// count runs a counting query as superuser.
func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func conversation(r response) map[string]any {
	r.t.Helper()
	c, ok := r.body["conversation_update"].(map[string]any)
	if !ok {
		r.t.Fatalf("no conversation_update in %s", r.raw)
	}
	return c
}

func number(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// exec runs a statement as superuser, to set up what the API cannot (such
// as time passing).
func (e *env) exec(query string, args ...any) {
	e.t.Helper()
	if _, err := e.pool.Exec(context.Background(), query, args...); err != nil {
		e.t.Fatal(err)
	}
}
