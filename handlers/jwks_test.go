package handlers_test

import (
	"net/http"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// A Supabase project with asymmetric keys: tokens are ES256, verified with
// the project's JWKS, which the service fetches once and caches.
func TestES256TokensVerifiedWithJWKS(t *testing.T) {
	supabase := apptest.StartSupabaseAuth(t)
	svc, u := apptest.StartWithUser(t, apptest.Options{Auth: config.Auth{SupabaseURL: supabase.URL}})
	u.Token = supabase.Token(t, u.ID, u.Email)
	for range 3 {
		svc.PostTurns(t, u, "", apptest.Exchange("ES256 question", "ES256 answer")...).WantStatus(http.StatusOK)
	}
	if n := supabase.KeyFetches(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want once (keys are cached)", n)
	}
	if n := svc.Count(t, `select count(*) from conversation_turns where facilitator_id = $1::uuid`, u.ID); n != 2 {
		t.Fatalf("want 2 turns stored for the ES256 caller, got %d", n)
	}
	// A token signed by a key the project does not publish is refused.
	svc.Call(t, supabase.ForgedToken(t, u.ID), http.MethodGet, "/api/conversation-memory", nil).WantError(401, "Invalid authentication")
}
