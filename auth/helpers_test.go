package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"mentormemory/mentor"
)

const (
	testSecret = "super-secret-jwt-token-with-at-least-32-characters-long"
	testSub    = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	testEmail  = "parent@example.com"
	testIssuer = "https://project.supabase.co/auth/v1"
	jwksPath   = "/auth/v1/.well-known/jwks.json"
)

// t0 is the fake "now" of the tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is read by the verifier's parser and by its JWKS refresh, from
// request and background goroutines alike, hence the atomic.
type fakeClock struct{ ns atomic.Int64 }

func newClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// testKeys are generated once: RSA key generation is slow.
type testKeys struct {
	ec, ec2   *ecdsa.PrivateKey // ec2 is a second ES256 key, for rotation
	rsa, rsa2 *rsa.PrivateKey
	attacker  *ecdsa.PrivateKey // never published
}

var keys = sync.OnceValue(func() testKeys {
	ec := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		return k
	}
	rs := func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	}
	return testKeys{ec: ec(), ec2: ec(), rsa: rs(), rsa2: rs(), attacker: ec()}
})

// validClaims are claims every verifier in the tests accepts at now. Each
// rejection test changes exactly one thing about them.
func validClaims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{
		"sub":   testSub,
		"aud":   "authenticated",
		"role":  "authenticated",
		"iss":   testIssuer,
		"email": testEmail,
		"iat":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
	}
}

// sign signs claims with method and key, setting the kid header when given.
func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return s
}

func signHS(t *testing.T, claims jwt.MapClaims) string {
	return sign(t, jwt.SigningMethodHS256, []byte(testSecret), "", claims)
}

func signES(t *testing.T, claims jwt.MapClaims) string {
	return sign(t, jwt.SigningMethodES256, keys().ec, "ec-1", claims)
}

func signRS(t *testing.T, claims jwt.MapClaims) string {
	return sign(t, jwt.SigningMethodRS256, keys().rsa, "rsa-1", claims)
}

// b64 encodes a JWT segment.
func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func publicPEM(t *testing.T, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// jwk is the public JWK of pub as Supabase would publish it.
func jwk(t *testing.T, pub any, kid string, alg jwkset.ALG) jwkset.JWKMarshal {
	t.Helper()
	j, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{
		ALG:    alg,
		KID:    kid,
		USE:    jwkset.UseSig,
		KEYOPS: []jwkset.KEYOPS{jwkset.KeyOpsVerify},
	}})
	if err != nil {
		t.Fatalf("building JWK %s: %v", kid, err)
	}
	return j.Marshal()
}

func ecJWK(t *testing.T) jwkset.JWKMarshal {
	return jwk(t, &keys().ec.PublicKey, "ec-1", jwkset.AlgES256)
}

func rsaJWK(t *testing.T) jwkset.JWKMarshal {
	return jwk(t, &keys().rsa.PublicKey, "rsa-1", jwkset.AlgRS256)
}

// jwksServer serves a JWK Set that tests can swap or take down, and counts
// the requests it gets.
type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	body []byte
	down bool
	hits atomic.Int32
}

func newJWKSServer(t *testing.T, set ...jwkset.JWKMarshal) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.set(t, set...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != jwksPath {
			http.NotFound(w, r)
			return
		}
		s.hits.Add(1)
		s.mu.Lock()
		body, down := s.body, s.down
		s.mu.Unlock()
		if down {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(t *testing.T, set ...jwkset.JWKMarshal) {
	t.Helper()
	body := mustJSON(t, jwkset.JWKSMarshal{Keys: append([]jwkset.JWKMarshal{}, set...)})
	s.mu.Lock()
	s.body = body
	s.mu.Unlock()
}

func (s *jwksServer) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *jwksServer) served() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body
}

// newVerifier builds a verifier that is closed when the test ends.
func newVerifier(t *testing.T, cfg Config) *Verifier {
	t.Helper()
	v, err := NewVerifier(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	t.Cleanup(v.Close)
	return v
}

// assertAccepted fails the test unless v accepts token as the test's user;
// what says which token it is.
func assertAccepted(t *testing.T, v *Verifier, token, what string) {
	t.Helper()
	c, err := v.Verify(token)
	if err != nil {
		t.Fatalf("%s rejected: %v", what, err)
	}
	if c.UserID != testSub || c.Email != testEmail {
		t.Fatalf("%s: caller = %+v", what, c)
	}
}

// assertRejected checks that err is the one error Verify may show callers.
func assertRejected(t *testing.T, c mentor.Caller, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("token accepted (caller %+v), want it rejected", c)
	}
	var e *mentor.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is %T, want *mentor.Error", err, err)
	}
	if e.Code != mentor.CodeUnauthenticated || e.Message != "Invalid authentication" {
		t.Fatalf("error code %q message %q, want %q %q", e.Code, e.Message, mentor.CodeUnauthenticated, "Invalid authentication")
	}
	if e.Cause == nil {
		t.Fatal("error has no Cause to log")
	}
	if c.UserID != "" || c.Email != "" || c.Claims != nil {
		t.Fatalf("rejected token still returned caller %+v", c)
	}
}

// tamper replaces the payload of a signed token, keeping its signature.
func tamper(t *testing.T, token string, change func(jwt.MapClaims)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts", token, len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	change(claims)
	parts[1] = b64(mustJSON(t, claims))
	return strings.Join(parts, ".")
}
