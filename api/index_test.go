package handler

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The function refuses to start in dev mode, whatever else is configured:
// every request answers 503, and none mints a token.
func TestVercelRefusesDevMode(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://mentor@127.0.0.1:1/unused")
	t.Setenv("SUPABASE_JWT_SECRET", strings.Repeat("s", 32))
	t.Setenv("MENTOR_DEV_MODE", "true")
	for _, path := range []string{"/api/dev/token", "/api/config"} {
		w := httptest.NewRecorder()
		Handler(w, httptest.NewRequest(http.MethodPost, path, nil))
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "Service not configured") {
			t.Fatalf("POST %s in dev mode: %d %s", path, w.Code, w.Body)
		}
	}
	if startErr == nil || !strings.Contains(startErr.Error(), "MENTOR_DEV_MODE is refused on Vercel") {
		t.Fatalf("start error %v: want dev mode named", startErr)
	}
}
