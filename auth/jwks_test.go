package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

// jwksVerifier starts a JWKS-only verifier against srv on a fake clock.
func jwksVerifier(t *testing.T, srv *jwksServer, clock *fakeClock) *Verifier {
	t.Helper()
	return newVerifier(t, Config{SupabaseURL: srv.URL, HTTPClient: srv.Client(), Now: clock.Now})
}

func wantHits(t *testing.T, srv *jwksServer, want int32) {
	t.Helper()
	if got := srv.hits.Load(); got != want {
		t.Fatalf("JWKS fetched %d times, want %d", got, want)
	}
}

func TestVerifyJWKS(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t), rsaJWK(t))
	// A trailing slash on SUPABASE_URL is common and must not break the path.
	v := newVerifier(t, Config{SupabaseURL: srv.URL + "/", HTTPClient: srv.Client(), Now: clock.Now})
	wantHits(t, srv, 1)

	for name, token := range map[string]string{
		"ES256": signES(t, validClaims(t0)),
		"RS256": signRS(t, validClaims(t0)),
	} {
		t.Run(name, func(t *testing.T) {
			for range 3 {
				assertAccepted(t, v, token, name+" token")
			}
		})
	}
	// Known keys are used from memory: no request per token.
	wantHits(t, srv, 1)
}

func TestJWKSRefreshOnUnknownKID(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t))
	v := jwksVerifier(t, srv, clock)

	// Supabase rotates: a new key is published and tokens start naming it.
	clock.Advance(minRefreshInterval)
	srv.set(t, ecJWK(t), jwk(t, &keys().rsa2.PublicKey, "rsa-2", jwkset.AlgRS256))
	claims := validClaims(clock.Now())
	assertAccepted(t, v, sign(t, jwt.SigningMethodRS256, keys().rsa2, "rsa-2", claims), "token with the new kid")
	wantHits(t, srv, 2)

	// The old key keeps working and the new one is now cached.
	assertAccepted(t, v, signES(t, claims), "the old key's token after the refresh")
	assertAccepted(t, v, sign(t, jwt.SigningMethodRS256, keys().rsa2, "rsa-2", claims), "the new key's token")
	wantHits(t, srv, 2)
}

func TestJWKSUnknownKIDRejectedAndRateLimited(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t))
	v := jwksVerifier(t, srv, clock)
	wantHits(t, srv, 1)

	unknown := func(kid string) string {
		return sign(t, jwt.SigningMethodES256, keys().ec2, kid, validClaims(clock.Now()))
	}

	// Right after the start-up fetch, an unknown kid does not refetch.
	c, err := v.Verify(unknown("ec-2"))
	assertRejected(t, c, err)
	wantHits(t, srv, 1)

	// Later it refetches once, and a kid still absent is rejected.
	clock.Advance(minRefreshInterval)
	c, err = v.Verify(unknown("ec-2"))
	assertRejected(t, c, err)
	wantHits(t, srv, 2)

	// A burst of made-up kids, concurrent or not, costs no more fetches
	// within the interval.
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			c, err := v.Verify(unknown(fmt.Sprintf("spray-%d", i)))
			if err == nil {
				t.Errorf("made-up kid accepted: %+v", c)
			}
		})
	}
	wg.Wait()
	wantHits(t, srv, 2)

	// Once the interval has passed, a key published meanwhile is found.
	srv.set(t, ecJWK(t), jwk(t, &keys().ec2.PublicKey, "ec-2", jwkset.AlgES256))
	clock.Advance(minRefreshInterval - time.Second)
	c, err = v.Verify(unknown("ec-2"))
	assertRejected(t, c, err)
	wantHits(t, srv, 2)
	clock.Advance(time.Second)
	assertAccepted(t, v, unknown("ec-2"), "a token of the key published before the refresh")
	wantHits(t, srv, 3)
}

func TestJWKSDownAtStart(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t))
	srv.setDown(true)
	v := jwksVerifier(t, srv, clock) // fails the test if NewVerifier fails
	wantHits(t, srv, 1)

	token := signES(t, validClaims(t0))
	c, err := v.Verify(token)
	assertRejected(t, c, err)

	// Supabase comes back; the next token past the interval fetches the keys.
	srv.setDown(false)
	clock.Advance(minRefreshInterval)
	assertAccepted(t, v, signES(t, validClaims(clock.Now())), "a token after Supabase came back")
	wantHits(t, srv, 2)
}

func TestJWKSUnreachableAtStart(t *testing.T) {
	dead := httptest.NewServer(nil)
	url := dead.URL
	dead.Close()

	clock := newClock(t0)
	v := newVerifier(t, Config{SupabaseURL: url, Now: clock.Now})
	c, err := v.Verify(signES(t, validClaims(t0)))
	assertRejected(t, c, err)
}

func TestJWKSRefreshKeepsKeysWhenFetchFails(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t))
	v := jwksVerifier(t, srv, clock)

	srv.setDown(true)
	clock.Advance(minRefreshInterval)
	c, err := v.Verify(sign(t, jwt.SigningMethodES256, keys().ec2, "ec-2", validClaims(clock.Now())))
	assertRejected(t, c, err)
	wantHits(t, srv, 2)
	assertAccepted(t, v, signES(t, validClaims(clock.Now())), "the cached key's token after a failed refresh")
}

func TestJWKSRefreshDropsRevokedKeys(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t), rsaJWK(t))
	v := jwksVerifier(t, srv, clock)
	assertAccepted(t, v, signES(t, validClaims(t0)), "an ES256 token")

	// Supabase revokes ec-1; the next refresh (here caused by an unknown
	// kid) must drop it.
	srv.set(t, rsaJWK(t))
	clock.Advance(minRefreshInterval)
	c, err := v.Verify(sign(t, jwt.SigningMethodES256, keys().ec2, "ec-2", validClaims(clock.Now())))
	assertRejected(t, c, err)
	c, err = v.Verify(signES(t, validClaims(clock.Now())))
	assertRejected(t, c, err)
	assertAccepted(t, v, signRS(t, validClaims(clock.Now())), "the remaining key's token")
}

func TestVerifyAfterClose(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t))
	v := jwksVerifier(t, srv, clock)
	v.Close()
	assertAccepted(t, v, signES(t, validClaims(t0)), "a token of a cached key after Close")
}

// A JWKS can carry keys this service must not use. Each is skipped, and the
// usable keys around it still load.
func TestParseJWKSSkipsUnusableKeys(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A 1024-bit modulus, written by hand since generating one is refused.
	weakRSA := &rsa.PublicKey{N: new(big.Int).Lsh(big.NewInt(1), 1023), E: 65537}
	weakRSA.N.Add(weakRSA.N, big.NewInt(1))

	noKID := ecJWK(t)
	noKID.KID = ""
	encUse := jwk(t, &keys().ec2.PublicKey, "enc", "")
	encUse.USE = jwkset.UseEnc
	signOnly := jwk(t, &keys().ec2.PublicKey, "sign-only", jwkset.AlgES256)
	signOnly.KEYOPS = []jwkset.KEYOPS{jwkset.KeyOpsSign}
	ecAsRS := jwk(t, &keys().ec2.PublicKey, "ec-as-rs", "")
	ecAsRS.ALG = jwkset.AlgRS256
	rsaAsPS := jwk(t, &keys().rsa2.PublicKey, "rsa-as-ps", "")
	rsaAsPS.ALG = jwkset.AlgPS256
	weak := jwk(t, weakRSA, "weak", jwkset.AlgRS256)
	oct := jwkset.JWKMarshal{KTY: jwkset.KtyOct, KID: "oct", ALG: jwkset.AlgHS256,
		K: base64.RawURLEncoding.EncodeToString([]byte(testSecret))}

	body := mustJSON(t, jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{
		oct, noKID, encUse, signOnly, ecAsRS, rsaAsPS, weak,
		jwk(t, &p384.PublicKey, "p384", ""), // no alg: only the curve says it is not ES256
		jwk(t, edPub, "ed25519", ""),
		ecJWK(t), rsaJWK(t),
	}})
	got, err := parseJWKS(body)
	if err != nil {
		t.Fatalf("parseJWKS: %v", err)
	}
	if len(got) != 2 || got["ec-1"].alg != algES256 || got["rsa-1"].alg != algRS256 {
		t.Fatalf("parseJWKS kept %v, want exactly ec-1 (ES256) and rsa-1 (RS256)", got)
	}
	if !keys().ec.PublicKey.Equal(got["ec-1"].key) || !keys().rsa.PublicKey.Equal(got["rsa-1"].key) {
		t.Fatal("parseJWKS loaded different key material")
	}

	for _, bad := range []string{``, `[]`, `{}`, `{"keys":`, `null`} {
		if _, err := parseJWKS([]byte(bad)); err == nil {
			t.Errorf("parseJWKS(%q) succeeded, want an error", bad)
		}
	}
}
