package handlers_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/llm/llmtest"
)

const metricsToken = "metrics-token-of-the-operator"

// scrape reads /metrics as the operator's scraper does, with token.
func scrape(t *testing.T, svc *apptest.Service, token string) (int, string) {
	t.Helper()
	res := apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/metrics", Token: token})
	if res.Status == 0 {
		t.Fatalf("no answer: %v", res.Err)
	}
	return res.Status, string(res.Raw)
}

// sample is the value of the series named exactly (name and labels, as
// Prometheus's text format writes them), or -1 when it is not there.
func sample(page, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(page)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// After a few requests, a counselor reply, a streamed one and a drain of
// the job queue, the operator's scrape shows each counted: requests by
// route pattern and status with their latency, the pool, the queue by
// kind, the jobs done, the model calls by purpose with their tokens, and
// the streams (open now, and their time to the first text).
func TestMetricsCountRequestsJobsAndModelCalls(t *testing.T) {
	model := llmtest.NewScriptedChat(t, func(_ int, req llmtest.ChatRequest) http.HandlerFunc {
		if req.ResponseFormat != nil {
			return llmtest.ReplyContent(`{"memories": []}`, "stop") // an extraction
		}
		return llmtest.ReplyContent("Let's try the pizza game.", "stop")
	})
	svc := apptest.Start(t, apptest.Options{ModelURL: model.URL,
		Web: config.Web{MetricsToken: metricsToken, CronSecret: "cron-secret-of-the-scheduler"}})
	u := svc.NewUser(t)
	emma := svc.NewLearner(t, u, "Emma")
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodGet, "/api/memories/not-a-uuid/history", nil).WantStatus(http.StatusBadRequest)
	svc.PostTurns(t, u, emma, apptest.Exchange("Emma loves pizza.", "Pizza fractions, then!")...).WantStatus(http.StatusOK)

	status, page := scrape(t, svc, metricsToken)
	if status != http.StatusOK {
		t.Fatalf("scrape: %d %s", status, page)
	}
	for series, want := range map[string]float64{
		`mentor_http_requests_total{method="GET",route="/api/learners",status="200"}`:             2,
		`mentor_http_requests_total{method="GET",route="/api/memories/:id/history",status="400"}`: 1,
		`mentor_http_request_duration_seconds_count{method="GET",route="/api/learners"}`:          2,
		`mentor_jobs_queued{kind="extract",state="queued"}`:                                       1,
		`mentor_jobs_queued{kind="consolidate",state="queued"}`:                                   0,
	} {
		if got := sample(page, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if sample(page, "mentor_db_pool_acquires_total") <= 0 || sample(page, "mentor_db_pool_max_connections") <= 0 ||
		sample(page, `mentor_db_pool_connections{state="idle"}`) < 0 {
		t.Errorf("the pool's figures are missing:\n%s", page)
	}
	if strings.Contains(page, "not-a-uuid") || strings.Contains(page, emma) || strings.Contains(page, u.ID) {
		t.Error("a series names an id: routes must be counted by their pattern")
	}

	// The scheduler drains the queue (the extraction runs); the counselor
	// answers once.
	apptest.Client{URL: svc.URL}.Do(t, apptest.Request{Method: http.MethodGet, Path: "/api/jobs/run", Token: "cron-secret-of-the-scheduler"}).
		WantStatus(http.StatusOK)
	svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "Ideas for Emma?", "learner_id": emma}).
		WantStatus(http.StatusOK)
	// And once more, streamed.
	svc.Stream(t, u.Token, "/api/counselor", map[string]any{"message": "And for Max?"}).All()

	_, page = scrape(t, svc, metricsToken)
	for series, want := range map[string]float64{
		`mentor_jobs_finished_total{kind="extract",outcome="done"}`:              1,
		`mentor_jobs_queued{kind="extract",state="queued"}`:                      0,
		`mentor_model_calls_total{outcome="ok",purpose="extraction"}`:            1,
		`mentor_model_calls_total{outcome="ok",purpose="counselor"}`:             2,
		`mentor_model_tokens_total{purpose="counselor"}`:                         40,
		`mentor_counselor_first_text_seconds_count`:                              1,
		`mentor_counselor_streams_open`:                                          0,
		`mentor_model_call_duration_seconds_count{purpose="extraction"}`:         1,
		`mentor_http_requests_total{method="GET",route="/metrics",status="200"}`: 1,
	} {
		if got := sample(page, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// The metrics are the operator's: refused without the token, and not
// served on the public port at all unless a token is configured.
func TestMetricsStayOffThePublicAPI(t *testing.T) {
	svc, u := apptest.StartWithUser(t, apptest.Options{Web: config.Web{MetricsToken: metricsToken}})
	for _, token := range []string{"", "wrong-token-of-the-right-length", u.Token} {
		if status, page := scrape(t, svc, token); status != http.StatusUnauthorized || strings.Contains(page, "mentor_") {
			t.Fatalf("scrape with %q: %d %s", token, status, page)
		}
	}
	off := apptest.Start(t, apptest.Options{})
	if status, page := scrape(t, off, metricsToken); status != http.StatusNotFound || strings.Contains(page, "mentor_") {
		t.Fatalf("scrape of an app without a metrics token: %d %s", status, page)
	}
}
