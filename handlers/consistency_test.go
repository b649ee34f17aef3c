package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/handlers"
)

const refusedToken = "Memory-Consistency-Token is not a token this service gave: send the newest one an answer carried, as it came"

// A consistency token that the service could not have given is refused
// with a 400 that names the header, on every signed-in route, whether or
// not a read replica is configured; a well-formed one, or an empty one, is
// taken. The public routes take none. Without a replica no answer carries
// a token: there is nothing to wait for.
func TestAConsistencyTokenIsCheckedOnEveryRouteAndNoneIsGivenWithoutAReplica(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{})
	token := func(value string) http.Header { return http.Header{handlers.ConsistencyTokenHeader: {value}} }
	noToken := func(t *testing.T, r apptest.Response) {
		if got := r.Header.Get(handlers.ConsistencyTokenHeader); got != "" {
			t.Errorf("without a read replica, the answer carries the token %q", got)
		}
	}
	for _, bad := range []string{"16B3748", "0/", "/16B3748", "0/16B3748/1", "G/1", "-1/1", "0x1/1", "1_0/1", "123456789/1",
		"0/" + strings.Repeat("0", 16), "0/16B3748, 0/16B3749"} {
		for _, sc := range []apptest.Scenario{
			{Name: "search with " + bad, Method: http.MethodGet, Path: "/api/conversation-memory?search=fractions", Token: u.Token},
			{Name: "a post with " + bad, Method: http.MethodPost, Path: "/api/learners", Token: u.Token, Body: map[string]any{"name": "Emma"}},
		} {
			sc.Header, sc.WantStatus, sc.WantError = token(bad), http.StatusBadRequest, refusedToken
			sc.Run(t, svc)
		}
		apptest.Scenario{Name: "the health check with " + bad, Method: http.MethodGet, Path: "/healthz", Header: token(bad),
			WantStatus: http.StatusOK}.Run(t, svc)
	}
	for _, good := range []string{"0/16B3748", "FFFFFFFF/FFFFFFFF", "a/b", "0/0", ""} {
		apptest.Scenario{Name: "a post with " + good, Method: http.MethodPost, Path: "/api/learners", Token: u.Token,
			Body: map[string]any{"name": "Emma"}, Header: token(good), WantStatus: http.StatusCreated, Check: noToken}.Run(t, svc)
		apptest.Scenario{Name: "search with " + good, Method: http.MethodGet, Path: "/api/conversation-memory?search=fractions",
			Token: u.Token, Header: token(good), WantStatus: http.StatusOK, Check: noToken}.Run(t, svc)
	}
}
