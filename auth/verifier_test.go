package auth

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestNewVerifierConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no secret and no Supabase URL", Config{Issuer: testIssuer}},
		{"Supabase URL without scheme", Config{SupabaseURL: "project.supabase.co"}},
		{"Supabase URL with another scheme", Config{SupabaseURL: "ftp://project.supabase.co"}},
		{"negative leeway", Config{JWTSecret: testSecret, Leeway: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVerifier(context.Background(), tt.cfg)
			if err == nil {
				v.Close()
				t.Fatal("NewVerifier succeeded, want an error")
			}
		})
	}
}

func TestVerifyHS256(t *testing.T) {
	clock := newClock(t0)
	v := newVerifier(t, Config{JWTSecret: testSecret, Issuer: testIssuer, Now: clock.Now})

	claims := validClaims(t0)
	claims["sub"] = strings.ToUpper(testSub)
	claims["app_metadata"] = map[string]any{"provider": "email", "providers": []string{"email"}}
	claims["big"] = int64(1<<53 + 1) // not representable as a float64
	exp := t0.Add(90 * time.Minute).Unix()
	claims["exp"] = exp
	c, err := v.Verify(signHS(t, claims))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if c.UserID != testSub {
		t.Errorf("UserID = %q, want the lower-cased sub %q", c.UserID, testSub)
	}
	if c.Email != testEmail {
		t.Errorf("Email = %q, want %q", c.Email, testEmail)
	}

	// Claims is the verified payload as a JSON object, numbers intact, for
	// Postgres' request.jwt.claims.
	var got map[string]json.RawMessage
	if err := json.Unmarshal(c.Claims, &got); err != nil {
		t.Fatalf("Claims %s is not a JSON object: %v", c.Claims, err)
	}
	want := map[string]string{
		"sub":          `"` + strings.ToUpper(testSub) + `"`,
		"role":         `"authenticated"`,
		"aud":          `"authenticated"`,
		"email":        `"` + testEmail + `"`,
		"iss":          `"` + testIssuer + `"`,
		"exp":          strconv.FormatInt(exp, 10),
		"big":          "9007199254740993",
		"app_metadata": `{"provider":"email","providers":["email"]}`,
	}
	for k, w := range want {
		if string(got[k]) != w {
			t.Errorf("Claims[%q] = %s, want %s", k, got[k], w)
		}
	}
}

func TestVerifyWithoutOptionalClaims(t *testing.T) {
	clock := newClock(t0)
	v := newVerifier(t, Config{JWTSecret: testSecret, Now: clock.Now})
	claims := validClaims(t0)
	delete(claims, "email")
	delete(claims, "role")
	delete(claims, "iss") // no Issuer configured
	c, err := v.Verify(signHS(t, claims))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if c.UserID != testSub || c.Email != "" {
		t.Errorf("caller = %+v, want sub %s and no email", c, testSub)
	}
}

// These tokens sit just inside the limits the rejection tests cross, so that
// those tests fail for the reason they name and not because a limit is
// stricter than intended.
func TestVerifyAcceptsWithinLimits(t *testing.T) {
	clock := newClock(t0)
	v := newVerifier(t, Config{JWTSecret: testSecret, Issuer: testIssuer, Now: clock.Now})
	tests := []struct {
		name   string
		change func(jwt.MapClaims)
	}{
		{"expired within the leeway", func(c jwt.MapClaims) {
			c["iat"] = t0.Add(-time.Hour).Unix()
			c["exp"] = t0.Add(-10 * time.Second).Unix()
		}},
		{"nbf within the leeway", func(c jwt.MapClaims) { c["nbf"] = t0.Add(10 * time.Second).Unix() }},
		{"iat within the leeway", func(c jwt.MapClaims) { c["iat"] = t0.Add(10 * time.Second).Unix() }},
		{"aud list containing authenticated", func(c jwt.MapClaims) { c["aud"] = []string{"other", "authenticated"} }},
		{"7 KiB token", func(c jwt.MapClaims) { c["padding"] = strings.Repeat("p", 5<<10) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := validClaims(t0)
			tt.change(claims)
			token := signHS(t, claims)
			if len(token) > MaxTokenBytes {
				t.Fatalf("test token is %d bytes, over the limit", len(token))
			}
			if _, err := v.Verify(token); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

func TestVerifyConfiguredLeeway(t *testing.T) {
	clock := newClock(t0)
	claims := validClaims(t0)
	claims["exp"] = t0.Add(-time.Minute).Unix()
	token := signHS(t, claims)

	strict := newVerifier(t, Config{JWTSecret: testSecret, Now: clock.Now})
	c, err := strict.Verify(token)
	assertRejected(t, c, err)

	lenient := newVerifier(t, Config{JWTSecret: testSecret, Now: clock.Now, Leeway: 2 * time.Minute})
	if _, err := lenient.Verify(token); err != nil {
		t.Fatalf("Verify with a 2 minute leeway: %v", err)
	}
}

func TestVerifyUsesRealClockByDefault(t *testing.T) {
	v := newVerifier(t, Config{JWTSecret: testSecret})
	if _, err := v.Verify(signHS(t, validClaims(time.Now()))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	c, err := v.Verify(signHS(t, validClaims(t0.AddDate(-1, 0, 0))))
	assertRejected(t, c, err)
}
