package apptest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// SupabaseAuth is a stand-in for Supabase Auth's GET /auth/v1/user, the call
// the session check makes: it knows which tokens have a live session, and
// can be told to fail as an unhealthy Auth would.
type SupabaseAuth struct {
	URL     string // the project URL: Auth answers under URL + "/auth/v1"
	AnonKey string // the apikey every request must carry

	server *httptest.Server
	mu     sync.Mutex
	live   map[string]string // token → user id
	status int               // when non-zero, every request gets it
	calls  int
}

// StartSupabaseAuth runs the stand-in until the test ends.
func StartSupabaseAuth(tb testing.TB) *SupabaseAuth {
	a := &SupabaseAuth{AnonKey: "test-anon-key", live: map[string]string{}}
	a.server = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.server.URL
	tb.Cleanup(a.server.Close)
	return a
}

// SignIn gives token a live session for userID.
func (a *SupabaseAuth) SignIn(token, userID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live[token] = userID
}

// SignOut ends token's session, as signing out in the app does.
func (a *SupabaseAuth) SignOut(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.live, token)
}

// FailWith makes every request answer status (0: healthy again).
func (a *SupabaseAuth) FailWith(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = status
}

// Stop makes Auth unreachable: connections are refused from now on.
func (a *SupabaseAuth) Stop() { a.server.Close() }

// Calls is how many requests Auth has answered.
func (a *SupabaseAuth) Calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

func (a *SupabaseAuth) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	w.Header().Set("Content-Type", "application/json")
	// Supabase's answers: 401 for a request it cannot authenticate, 403
	// session_not_found once the user signed out.
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	userID, live := a.live[token]
	switch {
	case a.status != 0:
		w.WriteHeader(a.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": a.status, "msg": http.StatusText(a.status)})
	case r.Method != http.MethodGet || r.URL.Path != "/auth/v1/user":
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"code":404,"msg":"not found"}`))
	case r.Header.Get("apikey") != a.AnonKey || !bearer:
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":401,"error_code":"no_authorization","msg":"This endpoint requires a valid Bearer token"}`))
	case !live:
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"code":403,"error_code":"session_not_found","msg":"Session from session_id claim in JWT does not exist"}`))
	default:
		_ = json.NewEncoder(w).Encode(map[string]any{"id": userID, "aud": "authenticated", "role": "authenticated"})
	}
}
