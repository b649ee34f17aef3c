package handlers_test

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/config"
	"mentormemory/handlers"
	"mentormemory/llm"
	"mentormemory/postgres/pgtest"
	"mentormemory/web"
)

// TestTheDocumentNamesEveryRoute compares the routes of the whole app, with
// every optional route turned on, with the operations of the OpenAPI
// document: a route the document leaves out, or an operation no route
// answers, fails. (What each route takes and answers is checked by every
// other test, through apptest's contract check.)
func TestTheDocumentNamesEveryRoute(t *testing.T) {
	cfg := config.Config{
		Auth:     config.Auth{JWTSecret: apptest.Secret, DevMode: true},
		Database: config.Database{ArchiveTurns: 50},
		Web:      config.Web{CronSecret: "cron-secret", MetricsToken: "metrics-token"},
	}
	cfg.Model.Chat = llm.Config{APIKey: "test-key", BaseURL: "http://127.0.0.1:1", Model: "test-model"}
	a, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler), app.WithPool(pgtest.NewPool(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)

	var routes []string
	for _, r := range a.Handler.Routes() {
		if webClientFile(r.Method, r.Path) {
			continue
		}
		routes = append(routes, r.Method+" "+openAPIPath(r.Path))
	}
	var operations []string
	for path, item := range apptest.Contract(t).Paths.Map() {
		for method := range item.Operations() {
			operations = append(operations, method+" "+path)
		}
	}
	slices.Sort(routes)
	slices.Sort(operations)
	for _, r := range routes {
		if !slices.Contains(operations, r) {
			t.Errorf("the route %s is not in handlers/openapi.json", r)
		}
	}
	for _, op := range operations {
		if !slices.Contains(routes, op) {
			t.Errorf("handlers/openapi.json names %s, which no route answers", op)
		}
	}
	if len(routes) < 40 {
		t.Errorf("only %d routes found: %v", len(routes), routes)
	}
}

// webClientFile says whether a route serves a file of the web client, which
// the API's document leaves out.
func webClientFile(method, path string) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	if path == "/" {
		return true
	}
	_, err := fs.Stat(web.Static(), strings.TrimPrefix(path, "/"))
	return err == nil
}

// openAPIPath writes Echo's path parameters (:id) as OpenAPI's ({id}).
func openAPIPath(echoPath string) string {
	parts := strings.Split(echoPath, "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}

// TestTheDocumentIsServed: GET /api/openapi.json answers the document to
// anyone, as a client generator fetches it before signing in.
func TestTheDocumentIsServed(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{})
	res := svc.Call(t, "", http.MethodGet, "/api/openapi.json", nil).WantStatus(http.StatusOK)
	if !bytes.Equal(res.Raw, handlers.OpenAPIDocument()) {
		t.Error("the answer is not handlers/openapi.json")
	}
	if got := res.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	if res.Body["openapi"] != "3.1.0" {
		t.Errorf("openapi %v, want 3.1.0", res.Body["openapi"])
	}
}
