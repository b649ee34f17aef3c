package auth

import (
	"strings"
	"testing"
	"time"
)

func TestMintHS256RoundTrip(t *testing.T) {
	v := newVerifier(t, Config{JWTSecret: testSecret})
	for _, email := range []string{testEmail, ""} {
		token, err := MintHS256(testSecret, testSub, email, time.Hour)
		if err != nil {
			t.Fatalf("MintHS256: %v", err)
		}
		c, err := v.Verify(token)
		if err != nil {
			t.Fatalf("Verify(minted token, email %q): %v", email, err)
		}
		if c.UserID != testSub || c.Email != email {
			t.Errorf("caller = %+v, want sub %s email %q", c, testSub, email)
		}
		for _, claim := range []string{`"aud":"authenticated"`, `"role":"authenticated"`, `"iat":`, `"exp":`} {
			if !strings.Contains(string(c.Claims), claim) {
				t.Errorf("claims %s lack %s", c.Claims, claim)
			}
		}
	}
}

func TestMintHS256Expires(t *testing.T) {
	token, err := MintHS256(testSecret, testSub, "", time.Minute)
	if err != nil {
		t.Fatalf("MintHS256: %v", err)
	}
	later := newClock(time.Now().Add(time.Minute + DefaultLeeway + time.Second))
	v := newVerifier(t, Config{JWTSecret: testSecret, Now: later.Now})
	c, err := v.Verify(token)
	assertRejected(t, c, err)
}

func TestMintHS256Refuses(t *testing.T) {
	tests := []struct {
		name, secret, sub string
		ttl               time.Duration
	}{
		{"empty secret", "", testSub, time.Hour},
		{"sub not a uuid", testSecret, "user-1", time.Hour},
		{"zero ttl", testSecret, testSub, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if token, err := MintHS256(tt.secret, tt.sub, "", tt.ttl); err == nil {
				t.Fatalf("MintHS256 = %q, want an error", token)
			}
		})
	}
}
