package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mentormemory/app/apptest"
)

// TestALearnerIsRenamedAndABadNameRefused renames a learner through the
// API; a bad name is refused with its reason and changes nothing, and
// another facilitator's learner is not found.
func TestALearnerIsRenamedAndABadNameRefused(t *testing.T) {
	svc, u, emma := apptest.StartWithLearner(t, apptest.Options{}, "Emma")
	other := svc.NewUser(t)
	othersLearner := svc.NewLearner(t, other, "Not yours")

	res := svc.Call(t, u.Token, http.MethodPatch, "/api/learners/"+emma, map[string]any{"name": "  Emma Rose "}).WantStatus(http.StatusOK)
	if learner := res.Object("learner"); learner["id"] != emma || learner["name"] != "Emma Rose" {
		t.Fatalf("renamed: %s", res.Raw)
	}
	listed := svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	if !strings.Contains(string(listed.Raw), `"name":"Emma Rose"`) || strings.Contains(string(listed.Raw), `"name":"Emma"`) {
		t.Fatalf("listed after renaming: %s", listed.Raw)
	}

	namedStill := func(id, want string) func(*testing.T, apptest.Response) {
		return func(t *testing.T, _ apptest.Response) {
			t.Helper()
			if name := apptest.Scalar[string](t, svc.Pool, `select name from public.learners where id = $1::uuid`, id); name != want {
				t.Fatalf("the learner is named %q, want %q", name, want)
			}
		}
	}
	for _, sc := range []apptest.Scenario{
		{Name: "blank name", Path: "/api/learners/" + emma, Body: `{"name":"   "}`, WantStatus: 400, WantError: "Learner name required"},
		{Name: "name too long", Path: "/api/learners/" + emma, Body: `{"name":"` + strings.Repeat("n", 101) + `"}`, WantStatus: 400,
			WantError: "Learner name too long (at most 100 characters)"},
		{Name: "control character", Path: "/api/learners/" + emma, Body: `{"name":"Emma\u202e"}`, WantStatus: 400,
			WantError: "Learner name must not contain control characters (tab and line breaks are fine)"},
		{Name: "name missing", Path: "/api/learners/" + emma, Body: `{}`, WantStatus: 400, WantError: "Learner name required"},
		{Name: "not a uuid", Path: "/api/learners/emma", Body: `{"name":"Em"}`, WantStatus: 400, WantError: "learner id must be a uuid"},
	} {
		sc.Method, sc.Token, sc.Check = http.MethodPatch, u.Token, namedStill(emma, "Emma Rose")
		sc.Run(t, svc)
	}
	apptest.Scenario{Name: "another facilitator's learner", Method: http.MethodPatch, Path: "/api/learners/" + othersLearner,
		Token: u.Token, Body: `{"name":"Mine now"}`, WantStatus: 404, WantError: "Learner not found",
		Check: namedStill(othersLearner, "Not yours")}.Run(t, svc)
}
