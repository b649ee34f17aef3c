package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestVerifyRejects runs each attack against a verifier that accepts all
// three algorithms and checks the issuer. Every token is a valid one with a
// single thing wrong, so each case fails if the check it names is removed.
func TestVerifyRejects(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t), rsaJWK(t))
	v := newVerifier(t, Config{
		JWTSecret:   testSecret,
		SupabaseURL: srv.URL,
		Issuer:      testIssuer,
		HTTPClient:  srv.Client(),
		Now:         clock.Now,
	})

	// The unchanged tokens verify, so the cases below fail for their own
	// reason only.
	for name, token := range map[string]string{
		"HS256": signHS(t, validClaims(t0)),
		"ES256": signES(t, validClaims(t0)),
		"RS256": signRS(t, validClaims(t0)),
	} {
		if _, err := v.Verify(token); err != nil {
			t.Fatalf("valid %s token rejected: %v", name, err)
		}
	}

	// with returns a valid HS256 token with claims changed by change.
	with := func(change func(jwt.MapClaims)) func(t *testing.T) string {
		return func(t *testing.T) string {
			c := validClaims(t0)
			change(c)
			return signHS(t, c)
		}
	}
	// hmacWith signs valid claims as HS256 with key, under the given kid.
	hmacWith := func(kid string, key func(t *testing.T) []byte) func(t *testing.T) string {
		return func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, key(t), kid, validClaims(t0))
		}
	}

	tests := []struct {
		name  string
		token func(t *testing.T) string
	}{
		// Algorithms.
		{"alg none", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", validClaims(t0))
		}},
		{"alg none with a known kid", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "ec-1", validClaims(t0))
		}},
		{"alg NONE spelled otherwise", func(t *testing.T) string {
			return b64([]byte(`{"alg":"None","typ":"JWT"}`)) + "." + b64(mustJSON(t, validClaims(t0))) + "."
		}},
		{"HS512 signed with the secret", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS512, []byte(testSecret), "", validClaims(t0))
		}},
		{"ES384 header on an ES256 token", func(t *testing.T) string {
			parts := strings.Split(signES(t, validClaims(t0)), ".")
			parts[0] = b64([]byte(`{"alg":"ES384","kid":"ec-1","typ":"JWT"}`))
			return strings.Join(parts, ".")
		}},

		// Algorithm confusion: an HMAC keyed with public material, and a
		// public-key alg "signed" with the HMAC secret.
		{"HS256 keyed with the RSA public key PEM", hmacWith("rsa-1", func(t *testing.T) []byte {
			return publicPEM(t, &keys().rsa.PublicKey)
		})},
		{"HS256 keyed with the EC public key PEM", hmacWith("ec-1", func(t *testing.T) []byte {
			return publicPEM(t, &keys().ec.PublicKey)
		})},
		{"HS256 keyed with the JWKS JSON", hmacWith("rsa-1", func(t *testing.T) []byte {
			return srv.served()
		})},
		{"HS256 keyed with the RSA modulus JWK", hmacWith("rsa-1", func(t *testing.T) []byte {
			return mustJSON(t, rsaJWK(t))
		})},
		{"RS256 header with an HMAC signature from the secret", func(t *testing.T) string {
			return forgeHMAC(t, `{"alg":"RS256","kid":"rsa-1","typ":"JWT"}`, validClaims(t0), []byte(testSecret))
		}},
		{"ES256 header with an HMAC signature from the secret", func(t *testing.T) string {
			return forgeHMAC(t, `{"alg":"ES256","kid":"ec-1","typ":"JWT"}`, validClaims(t0), []byte(testSecret))
		}},
		{"ES256 token naming the RSA key", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodES256, keys().ec, "rsa-1", validClaims(t0))
		}},
		{"RS256 token naming the EC key", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS256, keys().rsa, "ec-1", validClaims(t0))
		}},

		// Signatures.
		{"wrong secret", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, []byte(testSecret+"!"), "", validClaims(t0))
		}},
		{"ES256 signed by an unpublished key under a known kid", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodES256, keys().attacker, "ec-1", validClaims(t0))
		}},
		{"RS256 signed by another RSA key under a known kid", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS256, keys().rsa2, "rsa-1", validClaims(t0))
		}},
		{"ES256 without a kid", func(t *testing.T) string {
			return sign(t, jwt.SigningMethodES256, keys().ec, "", validClaims(t0))
		}},
		{"HS256 payload tampered: sub", func(t *testing.T) string {
			return tamper(t, signHS(t, validClaims(t0)), func(c jwt.MapClaims) {
				c["sub"] = "0b3a4d4e-9c51-4a5e-8d1c-2f7b6e0a9c11"
			})
		}},
		{"ES256 payload tampered: exp", func(t *testing.T) string {
			return tamper(t, signES(t, validClaims(t0)), func(c jwt.MapClaims) {
				c["exp"] = t0.Add(365 * 24 * time.Hour).Unix()
			})
		}},
		{"RS256 payload tampered: role", func(t *testing.T) string {
			c := validClaims(t0)
			delete(c, "role")
			return tamper(t, signRS(t, c), func(c jwt.MapClaims) { c["role"] = "authenticated" })
		}},
		{"signature stripped", func(t *testing.T) string {
			tok := signHS(t, validClaims(t0))
			return tok[:strings.LastIndexByte(tok, '.')+1]
		}},

		// Time.
		{"expired", with(func(c jwt.MapClaims) {
			c["iat"] = t0.Add(-2 * time.Hour).Unix()
			c["exp"] = t0.Add(-time.Minute).Unix()
		})},
		{"no exp", with(func(c jwt.MapClaims) { delete(c, "exp") })},
		{"exp not a number", with(func(c jwt.MapClaims) { c["exp"] = "tomorrow" })},
		{"nbf beyond the leeway", with(func(c jwt.MapClaims) { c["nbf"] = t0.Add(time.Minute).Unix() })},
		{"iat beyond the leeway", with(func(c jwt.MapClaims) { c["iat"] = t0.Add(time.Minute).Unix() })},

		// Audience and issuer.
		{"wrong audience", with(func(c jwt.MapClaims) { c["aud"] = "anon" })},
		{"audience list without authenticated", with(func(c jwt.MapClaims) { c["aud"] = []string{"a", "b"} })},
		{"no audience", with(func(c jwt.MapClaims) { delete(c, "aud") })},
		{"wrong issuer", with(func(c jwt.MapClaims) { c["iss"] = "https://attacker.supabase.co/auth/v1" })},
		{"no issuer", with(func(c jwt.MapClaims) { delete(c, "iss") })},

		// Subject.
		{"no sub", with(func(c jwt.MapClaims) { delete(c, "sub") })},
		{"empty sub", with(func(c jwt.MapClaims) { c["sub"] = "" })},
		{"sub not a uuid", with(func(c jwt.MapClaims) { c["sub"] = "user-1" })},
		{"sub a number", with(func(c jwt.MapClaims) { c["sub"] = 42 })},
		{"sub a uuid in braces", with(func(c jwt.MapClaims) { c["sub"] = "{" + testSub + "}" })},
		{"sub a uuid urn", with(func(c jwt.MapClaims) { c["sub"] = "urn:uuid:" + testSub })},
		{"sub the nil uuid", with(func(c jwt.MapClaims) { c["sub"] = "00000000-0000-0000-0000-000000000000" })},

		// Role.
		{"role service_role", with(func(c jwt.MapClaims) { c["role"] = "service_role" })},
		{"role anon", with(func(c jwt.MapClaims) { c["role"] = "anon" })},
		{"role empty", with(func(c jwt.MapClaims) { c["role"] = "" })},
		{"role not a string", with(func(c jwt.MapClaims) { c["role"] = []string{"authenticated"} })},
		{"email not a string", with(func(c jwt.MapClaims) { c["email"] = 7 })},

		// Size and shape.
		{"100 KB token", with(func(c jwt.MapClaims) { c["padding"] = strings.Repeat("p", 100<<10) })},
		{"just over 8 KiB", with(func(c jwt.MapClaims) { c["padding"] = strings.Repeat("p", 6<<10) })},
		{"Bearer prefix left on", func(t *testing.T) string { return "Bearer " + signHS(t, validClaims(t0)) }},
		{"padded base64", func(t *testing.T) string {
			parts := strings.Split(signHS(t, validClaims(t0)), ".")
			return parts[0] + "==." + parts[1] + "." + parts[2]
		}},
		{"empty", func(*testing.T) string { return "" }},
		{"garbage", func(*testing.T) string { return "not a token" }},
		{"three empty segments", func(*testing.T) string { return ".." }},
		{"three junk segments", func(*testing.T) string { return "a.b.c" }},
		{"header not JSON", func(t *testing.T) string {
			return b64([]byte("{alg:HS256")) + "." + b64(mustJSON(t, validClaims(t0))) + ".c2ln"
		}},
		{"payload not an object", func(t *testing.T) string {
			return forgeHMAC(t, `{"alg":"HS256","typ":"JWT"}`, nil, []byte(testSecret)) // payload "null"
		}},
		{"two segments", func(t *testing.T) string {
			tok := signHS(t, validClaims(t0))
			return tok[:strings.LastIndexByte(tok, '.')]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := v.Verify(tt.token(t))
			assertRejected(t, c, err)
		})
	}
}

// forgeHMAC builds a token with the given raw header whose signature is an
// HMAC-SHA256 of the signing input under key, whatever the header claims.
func forgeHMAC(t *testing.T, header string, claims jwt.MapClaims, key []byte) string {
	t.Helper()
	input := b64([]byte(header)) + "." + b64(mustJSON(t, claims))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(input))
	return input + "." + b64(mac.Sum(nil))
}

// A service configured for JWKS only must not accept HS256 at all, whatever
// key the token was signed with.
func TestJWKSOnlyRejectsHS256(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t), rsaJWK(t))
	v := newVerifier(t, Config{SupabaseURL: srv.URL, HTTPClient: srv.Client(), Now: clock.Now})

	if _, err := v.Verify(signES(t, validClaims(t0))); err != nil {
		t.Fatalf("valid ES256 token rejected: %v", err)
	}
	for name, key := range map[string][]byte{
		"any secret":        []byte(testSecret),
		"RSA public PEM":    publicPEM(t, &keys().rsa.PublicKey),
		"EC public PEM":     publicPEM(t, &keys().ec.PublicKey),
		"served JWKS bytes": srv.served(),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := v.Verify(sign(t, jwt.SigningMethodHS256, key, "rsa-1", validClaims(t0)))
			assertRejected(t, c, err)
		})
	}
}

// A service configured for HS256 only must not accept tokens signed with
// asymmetric keys, and must not try to fetch any.
func TestSecretOnlyRejectsAsymmetric(t *testing.T) {
	clock := newClock(t0)
	v := newVerifier(t, Config{JWTSecret: testSecret, Now: clock.Now})
	for name, token := range map[string]string{
		"ES256": signES(t, validClaims(t0)),
		"RS256": signRS(t, validClaims(t0)),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := v.Verify(token)
			assertRejected(t, c, err)
		})
	}
}

// Each algorithm has one source of keys, whatever kid the token names. The
// parser's own key type checks would also stop a crossed key; this checks
// that we never hand one out in the first place.
func TestKeySourcePerAlgorithm(t *testing.T) {
	clock := newClock(t0)
	srv := newJWKSServer(t, ecJWK(t), rsaJWK(t))
	v := newVerifier(t, Config{JWTSecret: testSecret, SupabaseURL: srv.URL, HTTPClient: srv.Client(), Now: clock.Now})

	token := func(m jwt.SigningMethod, kid string) *jwt.Token {
		return &jwt.Token{Method: m, Header: map[string]any{"alg": m.Alg(), "kid": kid}}
	}
	if k, err := v.key(token(jwt.SigningMethodHS256, "rsa-1")); err != nil || string(k.([]byte)) != testSecret {
		t.Errorf("HS256 naming rsa-1 got key %T (%v), want the secret", k, err)
	}
	if k, err := v.key(token(jwt.SigningMethodRS256, "rsa-1")); err != nil || !keys().rsa.PublicKey.Equal(k) {
		t.Errorf("RS256 naming rsa-1 got key %T (%v), want the RSA public key", k, err)
	}
	for _, tok := range []*jwt.Token{
		token(jwt.SigningMethodES256, "rsa-1"),
		token(jwt.SigningMethodRS256, "ec-1"),
		token(jwt.SigningMethodHS512, "ec-1"),
		token(jwt.SigningMethodPS256, "rsa-1"),
	} {
		if k, err := v.key(tok); err == nil {
			t.Errorf("%s naming %v got key %T, want none", tok.Method.Alg(), tok.Header["kid"], k)
		}
	}
}
