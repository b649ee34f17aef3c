package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// signedIn runs the app with the remote session check against a stand-in
// Supabase Auth, and signs a facilitator in. Answers are cached for a
// nanosecond, so every request asks.
func signedIn(t *testing.T, writesOnly bool) (*apptest.Service, *apptest.SupabaseAuth, apptest.User) {
	t.Helper()
	a := apptest.StartSupabaseAuth(t)
	svc := apptest.Start(t, apptest.Options{Auth: config.Auth{
		JWTSecret: apptest.Secret, SupabaseURL: a.URL, SupabaseAnonKey: a.AnonKey,
		SessionCheck: true, SessionCheckWritesOnly: writesOnly, SessionCheckCache: time.Nanosecond,
	}})
	u := svc.NewUser(t)
	a.SignIn(u.Token, u.ID)
	return svc, a, u
}

// turnsStored is how many turns u has stored.
func turnsStored(t *testing.T, svc *apptest.Service, u apptest.User) int {
	t.Helper()
	return svc.Count(t, `select count(*) from conversation_turns where facilitator_id = $1`, u.ID)
}

func TestSignedOutTokenIsRefusedByTheSessionCheck(t *testing.T) {
	svc, a, u := signedIn(t, false)
	svc.PostTurns(t, u, "", apptest.Exchange("How is Maya doing with fractions?", "She is getting there.")...).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)

	// The token is still valid locally for an hour; Auth says the user
	// signed out, so nothing is served or stored any more.
	a.SignOut(u.Token)
	svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory", nil).WantError(http.StatusUnauthorized, "Invalid authentication")
	svc.PostTurns(t, u, "", apptest.Exchange("Is this stored?", "It must not be.")...).WantError(http.StatusUnauthorized, "Invalid authentication")
	if n := turnsStored(t, svc, u); n != 2 {
		t.Fatalf("%d turns stored, want the 2 from before signing out", n)
	}
}

func TestSessionCheckFailsClosedWhenAuthIsDown(t *testing.T) {
	svc, a, u := signedIn(t, false)
	a.FailWith(http.StatusServiceUnavailable)
	svc.PostTurns(t, u, "", apptest.Exchange("Will this be kept?", "Not while Auth is down.")...).
		WantError(http.StatusServiceUnavailable, "Could not confirm the session with Supabase Auth, please retry")
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusServiceUnavailable)
	a.Stop()
	svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusServiceUnavailable)
	if n := turnsStored(t, svc, u); n != 0 {
		t.Fatalf("%d turns stored while the session could not be confirmed, want 0", n)
	}
}

func TestSessionCheckOnWritesOnly(t *testing.T) {
	svc, a, u := signedIn(t, true)
	svc.PostTurns(t, u, "", apptest.Exchange("What did we try last week?", "Number lines.")...).WantStatus(http.StatusOK)

	a.SignOut(u.Token)
	// Reads are verified locally only; every write asks Auth.
	calls := a.Calls()
	svc.Call(t, u.Token, http.MethodGet, "/api/conversation-memory", nil).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	if a.Calls() != calls {
		t.Fatalf("reads called Auth %d times with the check on writes only", a.Calls()-calls)
	}
	svc.PostTurns(t, u, "", apptest.Exchange("And now?", "Refused.")...).WantError(http.StatusUnauthorized, "Invalid authentication")
	svc.Call(t, u.Token, http.MethodDelete, "/api/conversation-memory", nil).WantError(http.StatusUnauthorized, "Invalid authentication")
	svc.Call(t, u.Token, http.MethodPost, "/api/learners", map[string]any{"name": "Noor"}).WantError(http.StatusUnauthorized, "Invalid authentication")
	if n := svc.Count(t, `select count(*) from conversation_updates where facilitator_id = $1`, u.ID); n != 1 {
		t.Fatalf("the conversation was cleared by a signed-out user: %d active records, want 1", n)
	}
}
