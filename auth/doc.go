// Package auth verifies the Supabase access tokens that the Next.js app
// forwards to the memory service, and turns a verified token into the
// mentor.Caller the rest of the service works with.
//
// Verification is local: HS256 tokens are checked against the project's JWT
// secret, ES256 and RS256 tokens against the public keys Supabase publishes
// at /auth/v1/.well-known/jwks.json, which are fetched at start-up and kept
// in memory. The network is only used again to refresh those keys.
//
// Every rejection is the same *mentor.Error (401, "Invalid authentication"):
// telling a caller which check failed would only help someone probing the
// service. The precise reason is kept in the error's Cause for the logs.
package auth
