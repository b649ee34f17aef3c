package auth

import (
	"mentormemory/mentor"
)

// invalidMessage is the only thing a rejected caller ever learns.
const invalidMessage = "Invalid authentication"

// invalid wraps the real reason a token was rejected. The reason stays in
// Cause so that it is logged but never rendered to the caller.
func invalid(cause error) error {
	return &mentor.Error{Code: mentor.CodeUnauthenticated, Message: invalidMessage, Cause: cause}
}
