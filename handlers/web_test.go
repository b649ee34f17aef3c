package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"mentormemory/app"
	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/config"
)

// webServer serves the app with the given auth settings, which are what
// the web client is told.
func webServer(t *testing.T, auth config.Auth) string {
	t.Helper()
	return apptest.Start(t, apptest.Options{Auth: auth}).URL
}

// fetch sends a request through apptest, which holds the answers of the
// API's routes to its document.
func fetch(t *testing.T, method, url string, header http.Header) (apptest.Response, string) {
	t.Helper()
	res := apptest.Client{}.Do(t, apptest.Request{Method: method, Path: url, Header: header})
	if res.Status == 0 {
		t.Fatal(res.Err)
	}
	return res, string(res.Raw)
}

func TestWebClientFiles(t *testing.T) {
	supabase := apptest.StartSupabaseAuth(t)
	url := webServer(t, config.Auth{JWTSecret: apptest.Secret, SupabaseURL: supabase.URL})

	resp, index := fetch(t, http.MethodGet, url+"/", nil)
	if resp.Status != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		resp.Header.Get("Cache-Control") != "no-cache" || !strings.Contains(index, `<script type="module" src="/app.js">`) {
		t.Fatalf("GET /: %d %v\n%s", resp.Status, resp.Header, index)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self' " + supabase.URL + ";", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "*") {
		t.Errorf("CSP too broad: %q", csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" ||
		resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("security headers: %v", resp.Header)
	}

	// Every file the page refers to, and every module a module imports, is
	// served with the type the browser requires of it.
	wantType := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	refs := regexp.MustCompile(`(?:src|href)="/([a-z0-9-]+\.[a-z]+)"`).FindAllStringSubmatch(index, -1)
	seen := map[string]bool{}
	for len(refs) > 0 {
		name := refs[0][1]
		refs = refs[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		resp, body := fetch(t, http.MethodGet, url+"/"+name, nil)
		ext := name[strings.LastIndex(name, "."):]
		if resp.Status != 200 || resp.Header.Get("Content-Type") != wantType[ext] || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("GET /%s: %d %q %q", name, resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
		}
		if ext == ".js" {
			refs = append(refs, regexp.MustCompile(`from '\./([a-z0-9-]+\.js)'`).FindAllStringSubmatch(body, -1)...)
		}
		// Revalidation by ETag answers 304 without the body.
		if again, _ := fetch(t, http.MethodGet, url+"/"+name, http.Header{"If-None-Match": {resp.Header.Get("ETag")}}); again.Status != 304 {
			t.Errorf("GET /%s with its ETag: %d, want 304", name, again.Status)
		}
	}
	for _, name := range []string{"app.js", "api.js", "chat.js", "outbox.js", "stream.js", "session.js", "snippet.js", "style.css", "chat.css", "favicon.svg"} {
		if !seen[name] {
			t.Errorf("%s is not reachable from index.html", name)
		}
	}
	// The page must not need inline script or style, which the CSP forbids.
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|\sstyle="|\son[a-z]+="`).MatchString(index) {
		t.Errorf("index.html has inline script, style or handlers")
	}

	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/index.html", 200, "<!doctype html>"},
		{"GET", "/learners/emma", 404, `{"success":false,"error":"Not found"}`},
		{"GET", "/../go.mod", 404, `{"success":false,"error":"Not found"}`},
		{"GET", "/missing.js", 404, `{"success":false,"error":"Not found"}`},
		{"GET", "/api/nothing-here", 404, `{"success":false,"error":"Not found"}`},
		{"GET", "/api", 404, `{"success":false,"error":"Not found"}`},
		{"POST", "/anything", 404, `{"success":false,"error":"Not found"}`},
		{"POST", "/api/nothing-here", 404, `{"success":false,"error":"Not found"}`},
		{"DELETE", "/app.js", 405, `{"success":false,"error":"Method not allowed"}`},
		{"PUT", "/api/conversation-memory", 405, `{"success":false,"error":"Method not allowed"}`},
		{"GET", "/api/learners", 401, `{"success":false,"error":"Authentication required"}`},
		{"POST", "/api/dev/token", 404, `{"success":false,"error":"Not found"}`},
	}
	for _, tc := range cases {
		resp, body := fetch(t, tc.method, url+tc.path, nil)
		if resp.Status != tc.status || !strings.HasPrefix(strings.TrimSpace(body), tc.body) {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, resp.Status, body, tc.status, tc.body)
		}
	}
	if resp, body := fetch(t, http.MethodHead, url+"/", nil); resp.Status != 200 || body != "" {
		t.Errorf("HEAD /: %d %q", resp.Status, body)
	}
}

func TestWebConfig(t *testing.T) {
	supabase := apptest.StartSupabaseAuth(t)
	cases := []struct {
		name    string
		auth    config.Auth
		devMode bool
		want    string
	}{
		{"off", config.Auth{}, false,
			`{"dev_mode":false,"model_configured":false,"success":true,"supabase_anon_key":"","supabase_url":""}`},
		// Dev mode without a secret has nothing to sign with: it stays off.
		{"dev mode without a secret", config.Auth{DevMode: true, SupabaseURL: supabase.URL}, false,
			`{"dev_mode":false,"model_configured":false,"success":true,"supabase_anon_key":"","supabase_url":"` + supabase.URL + `"}`},
		{"supabase and dev", config.Auth{DevMode: true, JWTSecret: apptest.Secret, SupabaseURL: supabase.URL, SupabaseAnonKey: "anon"}, true,
			`{"dev_mode":true,"model_configured":false,"success":true,"supabase_anon_key":"anon","supabase_url":"` + supabase.URL + `"}`},
	}
	for _, tc := range cases {
		url := webServer(t, tc.auth)
		resp, body := fetch(t, http.MethodGet, url+"/api/config", nil)
		var got map[string]any
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		normalised, _ := json.Marshal(got)
		if resp.Status != 200 || string(normalised) != tc.want || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %s, want %s", tc.name, resp.Status, normalised, tc.want)
		}
		resp, body = fetch(t, http.MethodPost, url+"/api/dev/token", nil)
		if wantStatus := map[bool]int{true: 200, false: 404}[tc.devMode]; resp.Status != wantStatus {
			t.Errorf("%s: POST /api/dev/token %d %s, want %d", tc.name, resp.Status, body, wantStatus)
		}
	}
}

func TestDevTokenSignsInTheDemoFacilitator(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{Auth: config.Auth{DevMode: true, JWTSecret: apptest.Secret}})
	verifier, err := auth.NewVerifier(context.Background(), auth.Config{JWTSecret: apptest.Secret})
	if err != nil {
		t.Fatal(err)
	}
	defer verifier.Close()

	res := svc.Call(t, "", http.MethodPost, "/api/dev/token", nil).WantStatus(http.StatusOK)
	token, _ := res.Body["token"].(string)
	caller, err := verifier.Verify(token)
	if err != nil || caller.UserID != app.DemoFacilitatorID || res.Body["user_id"] != app.DemoFacilitatorID ||
		caller.Email != "dana@example.com" || res.Body["success"] != true {
		t.Fatalf("dev token: %s (caller %+v, %v)", res.Raw, caller, err)
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	_ = json.Unmarshal(caller.Claims, &claims)
	if ttl := time.Until(time.Unix(claims.Exp, 0)); ttl < 23*time.Hour || ttl > 24*time.Hour {
		t.Fatalf("dev token lives %v, want 24h", ttl)
	}
	// Minting wrote nothing: the facilitator is `server demo`'s to create.
	if n := svc.Count(t, `select count(*) from auth.users`); n != 0 {
		t.Fatalf("minting a dev token created %d users", n)
	}

	res = svc.Call(t, "", http.MethodPost, "/api/dev/token", map[string]any{"email": "sam@example.com"}).WantStatus(http.StatusOK)
	if caller, err := verifier.Verify(res.Body["token"].(string)); err != nil || caller.Email != "sam@example.com" {
		t.Fatalf("dev token with an email: %+v %v", caller, err)
	}
	svc.Call(t, "", http.MethodPost, "/api/dev/token", map[string]any{"email": "Dana <dana@example.com>"}).
		WantError(http.StatusBadRequest, "email must be a plain address such as dana@example.com")
	svc.Call(t, "", http.MethodPost, "/api/dev/token", `{"email":`).WantError(http.StatusBadRequest, "Malformed JSON")

	// A request addressed to another name, as a page using DNS rebinding
	// would send, gets no token.
	for host, want := range map[string]int{"evil.example": 404, "evil.example:8080": 404, "localhost:8080": 200, "[::1]:8080": 200} {
		req, err := http.NewRequest(http.MethodPost, svc.URL+"/api/dev/token", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("dev token for Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}

	// Once the demo facilitator exists, the token works on the API.
	if err := app.SeedDemo(context.Background(), svc.Pool); err != nil {
		t.Fatal(err)
	}
	learners := svc.Call(t, token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
	if list := learners.Body["learners"].([]any); len(list) != 2 || list[0].(map[string]any)["name"] != "Emma" {
		t.Fatalf("learners with the dev token: %s", learners.Raw)
	}
}

// TestVercelPublishesTheSameClient keeps vercel.json in step with the
// server: the same folder as the site, the API on the function, and the
// same security headers, with any Supabase project for connect-src.
func TestVercelPublishesTheSameClient(t *testing.T) {
	raw, err := os.ReadFile("../vercel.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		OutputDirectory string `json:"outputDirectory"`
		Rewrites        []struct{ Source, Destination string }
		Headers         []struct {
			Source  string
			Headers []struct{ Key, Value string }
		}
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.OutputDirectory != "web/static" {
		t.Errorf("outputDirectory %q, want web/static", cfg.OutputDirectory)
	}
	// The API, and the routes of the app outside /api, reach the function.
	onFunction := map[string]bool{}
	for _, r := range cfg.Rewrites {
		onFunction[r.Source] = r.Destination == "/api/index.go"
	}
	for _, source := range []string{"/api/(.*)", "/healthz", "/mcp", "/metrics"} {
		if !onFunction[source] {
			t.Errorf("no %s rewrite to api/index.go: %+v", source, cfg.Rewrites)
		}
	}

	supabase := apptest.StartSupabaseAuth(t)
	url := webServer(t, config.Auth{JWTSecret: apptest.Secret, SupabaseURL: supabase.URL})
	resp, _ := fetch(t, http.MethodGet, url+"/", nil)
	want := map[string]string{
		"Content-Security-Policy": strings.Replace(resp.Header.Get("Content-Security-Policy"), supabase.URL, "https://*.supabase.co", 1),
		"X-Content-Type-Options":  resp.Header.Get("X-Content-Type-Options"),
		"Referrer-Policy":         resp.Header.Get("Referrer-Policy"),
		"X-Frame-Options":         resp.Header.Get("X-Frame-Options"),
	}
	got := map[string]string{}
	for _, h := range cfg.Headers {
		if h.Source == "/(.*)" {
			for _, kv := range h.Headers {
				got[kv.Key] = kv.Value
			}
		}
	}
	for key, value := range want {
		if got[key] != value {
			t.Errorf("vercel.json %s = %q, want %q", key, got[key], value)
		}
	}
}
