package auth

import (
	"errors"

	"mentormemory/mentor"
)

// invalidMessage is the only thing a rejected caller ever learns.
const invalidMessage = "Invalid authentication"

// invalid wraps the real reason a token was rejected. The reason stays in
// Cause so that it is logged but never rendered to the caller.
func invalid(cause error) error {
	return &mentor.Error{Code: mentor.CodeUnauthenticated, Message: invalidMessage, Cause: cause}
}

// Reasons for rejecting a token that the jwt library does not produce itself.
var (
	errTooLong        = errors.New("token longer than the size limit")
	errEmpty          = errors.New("empty token")
	errNoSecret       = errors.New("HS256 token but no JWT secret configured")
	errNoJWKS         = errors.New("asymmetric token but no JWKS configured")
	errNoKID          = errors.New("asymmetric token without a kid header")
	errUnknownKID     = errors.New("no JWKS key with the token's kid")
	errKeyAlgMismatch = errors.New("token alg does not match the JWKS key")
	errUnexpectedAlg  = errors.New("unexpected signing algorithm")
	errMissingSub     = errors.New("missing sub claim")
	errSubNotUUID     = errors.New("sub claim is not a uuid")
	errBadRole        = errors.New("role claim is not \"authenticated\"")
	errBadEmail       = errors.New("email claim is not a string")
)
