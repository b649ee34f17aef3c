package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// MintHS256 mints a development access token shaped like the ones Supabase
// issues to signed-in users (sub, aud and role "authenticated", iat, exp and,
// when given, email), so the service can be exercised without a Supabase
// project. It refuses to sign with an empty secret, a sub that Verify would
// reject, or a non-positive ttl, so a misconfiguration fails here rather than
// as a puzzling 401 later.
func MintHS256(secret, sub, email string, ttl time.Duration) (string, error) {
	if secret == "" {
		return "", errors.New("auth: no JWT secret to sign with")
	}
	if _, err := uuid.Parse(sub); err != nil || len(sub) != 36 {
		return "", fmt.Errorf("auth: sub %q is not a uuid", sub)
	}
	if ttl <= 0 {
		return "", fmt.Errorf("auth: non-positive token lifetime %v", ttl)
	}
	now := time.Now()
	claims := jwt.MapClaims{
		"sub":  sub,
		"aud":  audience,
		"role": roleAuthenticated,
		"iat":  now.Unix(),
		"exp":  now.Add(ttl).Unix(),
	}
	if email != "" {
		claims["email"] = email
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
}
