package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
)

const (
	secret = apptest.Secret
	emmaID = app.DemoEmmaID
	maxID  = app.DemoMaxID
)

// model is an OpenAI-compatible chat server whose reply names the longest
// word of the last user message, so each answer is recognisably its own.
type model struct {
	// signOff, when set, ends every reply, as a mentor leaving something
	// for the next session does.
	signOff string

	mu       sync.Mutex
	requests []map[string]any
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	var last string
	messages, _ := req["messages"].([]any)
	for _, raw := range messages {
		if msg, _ := raw.(map[string]any); msg["role"] == "user" {
			last, _ = msg["content"].(string)
		}
	}
	reply := fmt.Sprintf("Thank you for telling me about %s. One small, calm step tonight will help; tell me how it goes.", distinctiveWord(last))
	if m.signOff != "" {
		reply += " " + m.signOff
	}
	llmtest.WriteJSON(w, http.StatusOK, llmtest.ChatCompletion(map[string]any{"role": "assistant", "content": reply}, "stop"))
}

func (m *model) all() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.requests...)
}

func distinctiveWord(text string) string {
	best := "that"
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) > len(best) {
			best = strings.ToLower(w)
		}
	}
	return best
}

// supabaseAuth stands in for Supabase Auth's token endpoint as the page
// calls it: cross-origin, with the apikey header, the password and
// refresh_token grants, rotating refresh tokens, and logout. Its access
// tokens are HS256 with the service's secret, as a project with the legacy
// JWT secret issues them.
type supabaseAuth struct {
	anonKey, email, password string
	ttl                      time.Duration

	mu      sync.Mutex
	grants  []string
	refresh string // the one valid refresh token
	logouts int
}

func (s *supabaseAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Supabase answers CORS for any origin; the page's fetch needs it.
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	h.Set("Access-Control-Allow-Headers", "apikey, authorization, content-type")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	reply := func(status int, body any) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	if r.Header.Get("apikey") != s.anonKey {
		reply(http.StatusUnauthorized, map[string]any{"message": "Invalid API key"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.URL.Path == "/auth/v1/logout" && r.Method == http.MethodPost:
		s.logouts++
		s.refresh = ""
		w.WriteHeader(http.StatusNoContent)
		return
	case r.URL.Path != "/auth/v1/token" || r.Method != http.MethodPost:
		reply(http.StatusNotFound, map[string]any{"msg": "Not found"})
		return
	}
	var body struct {
		Email, Password string
		RefreshToken    string `json:"refresh_token"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	grant := r.URL.Query().Get("grant_type")
	s.grants = append(s.grants, grant)
	switch {
	case grant == "password" && body.Email == s.email && body.Password == s.password:
	case grant == "refresh_token" && body.RefreshToken != "" && body.RefreshToken == s.refresh:
	case grant == "password":
		reply(http.StatusBadRequest, map[string]any{"code": 400, "error_code": "invalid_credentials", "msg": "Invalid login credentials"})
		return
	default:
		reply(http.StatusBadRequest, map[string]any{"code": 400, "error_code": "refresh_token_not_found", "msg": "Invalid Refresh Token"})
		return
	}
	token, err := auth.MintHS256(secret, app.DemoFacilitatorID, s.email, s.ttl)
	if err != nil {
		reply(http.StatusInternalServerError, map[string]any{"msg": err.Error()})
		return
	}
	s.refresh = randomHex(12)
	reply(http.StatusOK, map[string]any{
		"access_token": token, "token_type": "bearer", "expires_in": int(s.ttl.Seconds()),
		"expires_at": time.Now().Add(s.ttl).Unix(), "refresh_token": s.refresh,
		"user": map[string]any{"id": app.DemoFacilitatorID, "email": s.email},
	})
}

func (s *supabaseAuth) seen() (grants []string, logouts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.grants...), s.logouts
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// serve runs the app on 127.0.0.1 over the seeded database and returns its
// URL. With a modelURL the counselor talks to that model; without one the
// chat answers 503, as a server without OPENAI_API_KEY does.
func serve(t *testing.T, modelURL string, auth config.Auth) (*pgxpool.Pool, string) {
	t.Helper()
	svc := apptest.Start(t, apptest.Options{ModelURL: modelURL, Auth: auth})
	if err := app.SeedDemo(context.Background(), svc.Pool); err != nil {
		t.Fatal(err)
	}
	return svc.Pool, svc.URL
}
