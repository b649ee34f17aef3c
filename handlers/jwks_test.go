package handlers_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// A Supabase project with asymmetric keys: tokens are ES256, verified with
// the project's JWKS, which the service fetches once and caches.
func TestES256TokensVerifiedWithJWKS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const kid = "test-key-1"
	b64 := base64.RawURLEncoding.EncodeToString
	pub, err := key.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	point := pub.Bytes() // 0x04 || X || Y
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
		"x": b64(point[1:33]), "y": b64(point[33:]),
	}}})
	fetches := 0
	supabase := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/auth/v1/.well-known/jwks.json" {
			http.NotFound(w, r)
			return
		}
		fetches++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	defer supabase.Close()

	e := newEnv(t, apptest.Options{Auth: config.Auth{SupabaseURL: supabase.URL}})
	id := uuid.NewString()
	if _, err := e.pool.Exec(context.Background(), `insert into auth.users (id) values ($1::uuid)`, id); err != nil {
		t.Fatal(err)
	}
	sign := func(k *ecdsa.PrivateKey, keyID string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
			"sub": id, "aud": "authenticated", "role": "authenticated",
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		})
		tok.Header["kid"] = keyID
		s, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	token := sign(key, kid)
	u := user{id: id, token: token}
	for range 3 {
		e.post(u, "", exchange("ES256 question", "ES256 answer")...).wantStatus(http.StatusOK)
	}
	if fetches != 1 {
		t.Fatalf("JWKS fetched %d times, want once (keys are cached)", fetches)
	}
	if n := e.count(`select count(*) from conversation_turns where facilitator_id = $1::uuid`, id); n != 2 {
		t.Fatalf("want 2 turns stored for the ES256 caller, got %d", n)
	}
	// A token signed by a key the project does not publish is refused.
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e.call(sign(stranger, kid), http.MethodGet, "/api/conversation-memory", nil).wantError(401, "Invalid authentication")
}
