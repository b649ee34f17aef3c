package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/supabase-community/supabase-go"
	"golang.org/x/sync/singleflight"

	"mentormemory/mentor"
)

// A token verified locally stays valid until it expires, even after the
// user signs out or is deleted. SessionCheck closes that window: it asks
// Supabase Auth (GET /auth/v1/user, through supabase-go's auth client)
// whether the token's session is still live, and remembers the answer for a
// short while so that a page's burst of requests costs one call.

// Defaults of SessionCheckConfig.
const (
	DefaultSessionCacheTTL = 30 * time.Second
	DefaultSessionTimeout  = 3 * time.Second
)

// maxCachedSessions bounds the answers kept; past it, expired ones are
// dropped, and if none has expired the cache starts again empty (a burst of
// checks is cheaper than unbounded memory).
const maxCachedSessions = 10_000

// SessionCheckConfig configures SessionCheck.
type SessionCheckConfig struct {
	SupabaseURL string           // the project URL; Auth is at SupabaseURL + "/auth/v1"
	AnonKey     string           // the project's anon key, sent as Auth's apikey
	CacheTTL    time.Duration    // how long an answer is reused; default DefaultSessionCacheTTL
	Timeout     time.Duration    // per call to Auth; default DefaultSessionTimeout
	HTTPClient  *http.Client     // optional; its Transport is used for the calls
	Now         func() time.Time // optional clock for tests
}

// SessionCheck confirms with Supabase Auth that a locally verified token's
// session has not ended. It is safe for concurrent use.
type SessionCheck struct {
	client    *supabase.Client
	transport http.RoundTripper
	timeout   time.Duration
	ttl       time.Duration
	now       func() time.Time

	calls singleflight.Group

	mu    sync.Mutex
	cache map[[sha256.Size]byte]sessionAnswer
}

type sessionAnswer struct {
	live    bool
	expires time.Time
}

// Reasons a session check refuses a request; the caller only ever sees
// "Invalid authentication" or the 503.
var (
	errSessionEnded  = errors.New("supabase auth no longer accepts the token (signed out or deleted)")
	errSessionOfNone = errors.New("supabase auth returned another user than the token's sub")
)

// NewSessionCheck builds the check. supabase-go needs both the URL and the
// anon key: Auth refuses requests without the project's apikey.
func NewSessionCheck(cfg SessionCheckConfig) (*SessionCheck, error) {
	client, err := supabase.NewClient(cfg.SupabaseURL, cfg.AnonKey, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: session check: %w", err)
	}
	s := &SessionCheck{
		client:    client,
		transport: http.DefaultTransport,
		timeout:   cfg.Timeout,
		ttl:       cfg.CacheTTL,
		now:       cfg.Now,
		cache:     map[[sha256.Size]byte]sessionAnswer{},
	}
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		s.transport = cfg.HTTPClient.Transport
	}
	if s.timeout <= 0 {
		s.timeout = DefaultSessionTimeout
	}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionCacheTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Check answers nil when Auth confirms the session of token, which must
// already have been verified locally as caller's. A session Auth refuses is
// a 401 ("Invalid authentication"); Auth unreachable or failing is a 503:
// the check fails closed, since serving would mean trusting a token that
// may have been signed out.
func (s *SessionCheck) Check(ctx context.Context, token string, caller mentor.Caller) error {
	key := sha256.Sum256([]byte(token))
	if live, ok := s.cached(key); ok {
		return refusedUnless(live)
	}
	// Concurrent requests with one token share one call. The call runs on a
	// context of its own: one request giving up must not fail the others.
	v, err, _ := s.calls.Do(string(key[:]), func() (any, error) {
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		live, err := s.ask(callCtx, token, caller.UserID)
		if err != nil {
			return false, err
		}
		s.remember(key, live)
		return live, nil
	})
	if err != nil {
		return &mentor.Error{Code: mentor.CodeUnavailable,
			Message: "Could not confirm the session with Supabase Auth, please retry", Cause: err}
	}
	return refusedUnless(v.(bool))
}

func refusedUnless(live bool) error {
	if live {
		return nil
	}
	return invalid(errSessionEnded)
}

// ask calls GET /auth/v1/user with the token. It tells a refusal (401 or
// 403: the session is over) from a failure (anything else), which gotrue's
// client does not, by looking at the status on the way back.
func (s *SessionCheck) ask(ctx context.Context, token, userID string) (bool, error) {
	rt := &statusRecorder{ctx: ctx, next: s.transport}
	user, err := s.client.Auth.WithToken(token).WithClient(http.Client{Transport: rt}).GetUser()
	switch {
	case rt.status == http.StatusUnauthorized || rt.status == http.StatusForbidden:
		return false, nil
	case err != nil:
		return false, err
	case user.ID.String() != userID:
		// A healthy Auth never does this; refuse rather than serve.
		return false, fmt.Errorf("%w: got %s, token %s", errSessionOfNone, user.ID, userID)
	}
	return true, nil
}

func (s *SessionCheck) cached(key [sha256.Size]byte) (live, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.cache[key]
	if !ok || !s.now().Before(a.expires) {
		return false, false
	}
	return a.live, true
}

func (s *SessionCheck) remember(key [sha256.Size]byte, live bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) >= maxCachedSessions {
		for k, a := range s.cache {
			if !now.Before(a.expires) {
				delete(s.cache, k)
			}
		}
		if len(s.cache) >= maxCachedSessions {
			clear(s.cache)
		}
	}
	s.cache[key] = sessionAnswer{live: live, expires: now.Add(s.ttl)}
}

// statusRecorder carries the request's context into gotrue's calls, which
// take none, and keeps the status Auth answered.
type statusRecorder struct {
	ctx    context.Context
	next   http.RoundTripper
	status int
}

func (r *statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req.WithContext(r.ctx))
	if err == nil {
		r.status = resp.StatusCode
	}
	return resp, err
}
