package mentor

import (
	"context"
	"encoding/json"
)

// Caller is the verified identity behind a request: the facilitator's user id
// (the JWT sub) and the verified claims, which the store hands to Postgres so
// that row-level security decides what the caller may see.
type Caller struct {
	UserID string          // uuid, lower case
	Email  string          // may be empty
	Claims json.RawMessage // the verified JWT claims as a JSON object
}

type callerKey struct{}

// WithCaller returns a context that carries the caller.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller stored by WithCaller.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
