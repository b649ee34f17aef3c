package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// sessionCheckEnv runs the app with the remote session check against a
// stand-in Supabase Auth; answers are cached for a nanosecond, so every
// request asks.
func sessionCheckEnv(t *testing.T, writesOnly bool) (*env, *apptest.SupabaseAuth) {
	t.Helper()
	a := apptest.StartSupabaseAuth(t)
	return newEnv(t, apptest.Options{Auth: config.Auth{
		JWTSecret: apptest.Secret, SupabaseURL: a.URL, SupabaseAnonKey: a.AnonKey,
		SessionCheck: true, SessionCheckWritesOnly: writesOnly, SessionCheckCache: time.Nanosecond,
	}}), a
}

func TestSignedOutTokenIsRefusedByTheSessionCheck(t *testing.T) {
	e, a := sessionCheckEnv(t, false)
	u := e.newUser()
	a.SignIn(u.token, u.id)

	e.post(u, "", exchange("How is Maya doing with fractions?", "She is getting there.")...).wantStatus(http.StatusOK)
	e.call(u.token, http.MethodGet, "/api/conversation-memory", nil).wantStatus(http.StatusOK)

	// The token is still valid locally for an hour; Auth says the user
	// signed out, so nothing is served or stored any more.
	a.SignOut(u.token)
	e.call(u.token, http.MethodGet, "/api/conversation-memory", nil).wantError(http.StatusUnauthorized, "Invalid authentication")
	e.post(u, "", exchange("Is this stored?", "It must not be.")...).wantError(http.StatusUnauthorized, "Invalid authentication")
	if n := e.count(`select count(*) from conversation_turns where facilitator_id = $1`, u.id); n != 2 {
		t.Fatalf("%d turns stored, want the 2 from before signing out", n)
	}
}

func TestSessionCheckFailsClosedWhenAuthIsDown(t *testing.T) {
	e, a := sessionCheckEnv(t, false)
	u := e.newUser()
	a.SignIn(u.token, u.id)

	a.FailWith(http.StatusServiceUnavailable)
	res := e.post(u, "", exchange("Will this be kept?", "Not while Auth is down.")...)
	res.wantError(http.StatusServiceUnavailable, "Could not confirm the session with Supabase Auth, please retry")
	e.call(u.token, http.MethodGet, "/api/learners", nil).wantStatus(http.StatusServiceUnavailable)
	a.Stop()
	e.call(u.token, http.MethodGet, "/api/conversation-memory", nil).wantStatus(http.StatusServiceUnavailable)
	if n := e.count(`select count(*) from conversation_turns where facilitator_id = $1`, u.id); n != 0 {
		t.Fatalf("%d turns stored while the session could not be confirmed, want 0", n)
	}
}

func TestSessionCheckOnWritesOnly(t *testing.T) {
	e, a := sessionCheckEnv(t, true)
	u := e.newUser()
	a.SignIn(u.token, u.id)
	e.post(u, "", exchange("What did we try last week?", "Number lines.")...).wantStatus(http.StatusOK)

	a.SignOut(u.token)
	// Reads are verified locally only; every write asks Auth.
	calls := a.Calls()
	e.call(u.token, http.MethodGet, "/api/conversation-memory", nil).wantStatus(http.StatusOK)
	e.call(u.token, http.MethodGet, "/api/learners", nil).wantStatus(http.StatusOK)
	if a.Calls() != calls {
		t.Fatalf("reads called Auth %d times with the check on writes only", a.Calls()-calls)
	}
	e.post(u, "", exchange("And now?", "Refused.")...).wantError(http.StatusUnauthorized, "Invalid authentication")
	e.call(u.token, http.MethodDelete, "/api/conversation-memory", nil).wantError(http.StatusUnauthorized, "Invalid authentication")
	e.call(u.token, http.MethodPost, "/api/learners", map[string]any{"name": "Noor"}).wantError(http.StatusUnauthorized, "Invalid authentication")
	if n := e.count(`select count(*) from conversation_updates where facilitator_id = $1`, u.id); n != 1 {
		t.Fatalf("the conversation was cleared by a signed-out user: %d active records, want 1", n)
	}
}
