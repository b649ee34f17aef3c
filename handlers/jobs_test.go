package handlers_test

import (
	"net/http"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// A deployment with no worker of its own (the Vercel function) has its
// background work done by a scheduled call that holds CRON_SECRET: a
// consolidation asked for is run by the call, and nobody else may make it.
func TestTheSchedulerRunsTheBackgroundWork(t *testing.T) {
	const secret = "a-cron-secret-of-the-deployment"
	svc, dana, max := apptest.StartWithLearner(t, apptest.Options{Web: config.Web{CronSecret: secret}}, "Max")
	svc.Call(t, dana.Token, http.MethodPost, "/api/learners/"+max+"/consolidate", nil).WantStatus(http.StatusAccepted)

	const refused = "This route is for the scheduler: send CRON_SECRET as a bearer token"
	svc.Call(t, "", http.MethodGet, "/api/jobs/run", nil).WantError(http.StatusUnauthorized, refused)
	svc.Call(t, "not-the-secret", http.MethodGet, "/api/jobs/run", nil).WantError(http.StatusUnauthorized, refused)
	// A facilitator's token is not the scheduler's.
	svc.Call(t, dana.Token, http.MethodGet, "/api/jobs/run", nil).WantError(http.StatusUnauthorized, refused)

	run := svc.Call(t, secret, http.MethodGet, "/api/jobs/run", nil).WantStatus(http.StatusOK)
	if done := run.Object("done"); done["consolidated"] != 1.0 || done["time_up"] != false {
		t.Fatalf("the scheduled call: %s", run.Raw)
	}
	runs := svc.Call(t, dana.Token, http.MethodGet, "/api/consolidations?learner_id="+max, nil).WantStatus(http.StatusOK)
	if status := runs.Body["runs"].([]any)[0].(map[string]any)["status"]; status != "done" {
		t.Fatalf("the consolidation after the scheduled call: %s", runs.Raw)
	}
	if again := svc.Call(t, secret, http.MethodGet, "/api/jobs/run", nil).WantStatus(http.StatusOK); again.Object("done")["consolidated"] != 0.0 {
		t.Fatalf("a second call with nothing due: %s", again.Raw)
	}
}

// Without CRON_SECRET the route does not exist.
func TestTheSchedulersRouteIsOffWithoutASecret(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	svc.Call(t, "", http.MethodGet, "/api/jobs/run", nil).WantStatus(http.StatusNotFound)
}
