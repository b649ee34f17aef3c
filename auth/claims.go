package auth

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"mentormemory/mentor"
)

// roleAuthenticated is the Postgres role Supabase gives signed-in users.
// "anon" (the public API key) and "service_role" (which bypasses row-level
// security) must never reach this service: it only serves signed-in users,
// and the claims are handed to Postgres, where the role decides what RLS
// allows.
const roleAuthenticated = "authenticated"

// Why the claims of a verified token can still be refused.
var (
	errMissingSub = errors.New("missing sub claim")
	errSubNotUUID = errors.New("sub claim is not a uuid")
	errBadRole    = errors.New("role claim is not \"authenticated\"")
	errBadEmail   = errors.New("email claim is not a string")
)

// callerFrom checks the claims the jwt library does not know about and builds
// the caller. claims have already passed signature, exp, nbf, iat, aud and
// iss checks.
func callerFrom(claims jwt.MapClaims) (mentor.Caller, error) {
	sub, err := claims.GetSubject()
	if err != nil {
		return mentor.Caller{}, err
	}
	if sub == "" {
		return mentor.Caller{}, errMissingSub
	}
	// uuid.Parse also accepts "urn:uuid:…", "{…}" and undashed forms; only
	// the canonical 36-character form is what Supabase issues and what
	// auth.uid() in Postgres will see.
	id, err := uuid.Parse(sub)
	if err != nil || len(sub) != 36 || id == uuid.Nil {
		return mentor.Caller{}, fmt.Errorf("%w: %q", errSubNotUUID, sub)
	}

	if r, ok := claims["role"]; ok {
		if role, _ := r.(string); role != roleAuthenticated {
			return mentor.Caller{}, fmt.Errorf("%w: %v", errBadRole, r)
		}
	}

	var email string
	if e, ok := claims["email"]; ok {
		if email, ok = e.(string); !ok {
			return mentor.Caller{}, errBadEmail
		}
	}

	// Re-encode what was verified rather than passing the raw payload on:
	// had the payload repeated a key, Postgres could read a different value
	// from it than the one checked here.
	raw, err := json.Marshal(claims)
	if err != nil {
		return mentor.Caller{}, fmt.Errorf("encoding claims: %w", err)
	}
	return mentor.Caller{UserID: id.String(), Email: email, Claims: raw}, nil
}
