package auth_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/mentor"
)

// sessionClock is a settable clock, so cache expiry needs no sleeping.
type sessionClock struct{ now time.Time }

func (c *sessionClock) Now() time.Time { return c.now }

// startSessionCheck starts a stand-in Supabase Auth with a caller signed in
// with token, and a session check against it on a settable clock.
func startSessionCheck(t *testing.T, token string) (*apptest.SupabaseAuth, *sessionClock, *auth.SessionCheck, mentor.Caller) {
	t.Helper()
	a := apptest.StartSupabaseAuth(t)
	clock := &sessionClock{now: time.Now()}
	check, err := auth.NewSessionCheck(auth.SessionCheckConfig{
		SupabaseURL: a.URL, AnonKey: a.AnonKey, CacheTTL: 30 * time.Second, Timeout: time.Second, Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	caller := mentor.Caller{UserID: uuid.NewString()}
	a.SignIn(token, caller.UserID)
	return a, clock, check, caller
}

func wantCode(t *testing.T, err error, code mentor.Code, what string) {
	t.Helper()
	if got := mentor.ErrorCode(err); err == nil || got != code {
		t.Fatalf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func TestSessionCheckAcceptsLiveSessionsAndRefusesEndedOnes(t *testing.T) {
	a, clock, check, caller := startSessionCheck(t, "live-token")
	ctx := context.Background()

	if err := check.Check(ctx, "live-token", caller); err != nil {
		t.Fatalf("live session refused: %v", err)
	}
	// Within the cache's lifetime the answer is reused: signing out shows
	// only once it expires.
	a.SignOut("live-token")
	if err := check.Check(ctx, "live-token", caller); err != nil || a.Calls() != 1 {
		t.Fatalf("second check within the cache lifetime: error %v, %d calls to Auth; want nil and 1", err, a.Calls())
	}
	clock.now = clock.now.Add(31 * time.Second)
	wantCode(t, check.Check(ctx, "live-token", caller), mentor.CodeUnauthenticated, "signed-out session")
	if a.Calls() != 2 {
		t.Fatalf("%d calls to Auth, want 2: an expired answer must be asked again", a.Calls())
	}
	// A refusal is remembered too, so a signed-out client retrying does not
	// call Auth on every request.
	wantCode(t, check.Check(ctx, "live-token", caller), mentor.CodeUnauthenticated, "signed-out session, cached")
	if a.Calls() != 2 {
		t.Fatalf("%d calls to Auth, want 2: the refusal must be cached", a.Calls())
	}

	// Auth vouching for another user than the token's sub is never served.
	a.SignIn("other-token", uuid.NewString())
	if err := check.Check(ctx, "other-token", caller); err == nil {
		t.Fatal("a session of another user was accepted")
	}
}

func TestSessionCheckFailsClosedWhenAuthIsUnhealthy(t *testing.T) {
	a, clock, check, caller := startSessionCheck(t, "token")
	ctx := context.Background()

	for _, status := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusTooManyRequests} {
		a.FailWith(status)
		wantCode(t, check.Check(ctx, "token", caller), mentor.CodeUnavailable, http.StatusText(status))
	}
	// Failures are not cached: once Auth recovers, the next request passes.
	a.FailWith(0)
	if err := check.Check(ctx, "token", caller); err != nil {
		t.Fatalf("after Auth recovered: %v", err)
	}

	clock.now = clock.now.Add(time.Minute)
	a.Stop()
	wantCode(t, check.Check(ctx, "token", caller), mentor.CodeUnavailable, "Auth unreachable")
}
