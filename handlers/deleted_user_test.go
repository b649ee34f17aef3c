package handlers_test

import (
	"net/http"
	"testing"

	"mentormemory/app/apptest"
)

// A token outlives its user by up to an hour. Once the user is deleted, its
// requests are refused as unauthenticated, reads and writes alike: not
// answered with nothing, and not failed on a foreign key.
func TestDeletedUsersTokenIsRefused(t *testing.T) {
	svc, gone, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	kept := svc.NewUser(t)
	svc.PostTurns(t, gone, emma, apptest.Exchange("Emma loves maps.", "Let's use them.")...).WantStatus(http.StatusOK)
	svc.Exec(t, `delete from auth.users where id = $1::uuid`, gone.ID)

	for _, sc := range []apptest.Scenario{
		{Method: http.MethodGet, Path: "/api/learners"},
		{Method: http.MethodGet, Path: "/api/conversation-memory"},
		{Method: http.MethodGet, Path: "/api/conversation-memory?search=maps"},
		{Method: http.MethodPost, Path: "/api/learners", Body: map[string]any{"name": "Max"}},
		{Method: http.MethodPost, Path: "/api/conversation-memory", Body: apptest.ConversationBody("", apptest.Exchange("hi", "hello"))},
		{Method: http.MethodPost, Path: "/api/memories", Body: map[string]any{"type": "personal", "content": "Likes maps"}},
		{Method: http.MethodPost, Path: "/api/sessions/end", Body: map[string]any{}},
	} {
		sc.Token, sc.WantStatus, sc.WantError = gone.Token, http.StatusUnauthorized, "This account no longer exists; sign in again"
		sc.Run(t, svc)
	}
	if n := svc.Count(t, `select count(*) from public.learners where facilitator_id = $1::uuid`, gone.ID); n != 0 {
		t.Fatalf("%d learners written for a deleted user", n)
	}
	// Everyone else is served as before.
	svc.Call(t, kept.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
}
