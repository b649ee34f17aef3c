package apptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// SupabaseAuth is a stand-in for a Supabase project's Auth, as the service
// and the web client call it:
//
//   - the JWKS, at /auth/v1/.well-known/jwks.json: Auth signs its access
//     tokens with an ES256 key of its own and publishes it there, as a
//     project with asymmetric keys does;
//   - GET /auth/v1/user, which the session check calls: it knows which
//     tokens have a live session;
//   - the password and refresh_token grants of POST /auth/v1/token, with
//     rotating refresh tokens, and POST /auth/v1/logout, which the web
//     client calls cross-origin;
//   - POST /auth/v1/recover and POST /auth/v1/signup, which record the
//     email Auth would send (see Emails), and PUT /auth/v1/user, which sets
//     the signed-in user's password.
//
// It can be told to fail as an unhealthy Auth would.
type SupabaseAuth struct {
	URL     string // the project URL: Auth answers under URL + "/auth/v1"
	AnonKey string // the apikey every request but the JWKS's must carry

	server *httptest.Server
	key    *ecdsa.PrivateKey
	jwks   map[string]any // the public half of key, as Auth publishes it

	mu         sync.Mutex
	tokenTTL   time.Duration
	accounts   map[string]account // by email
	live       map[string]string  // access token → user id, while its session lasts
	refresh    map[string]string  // refresh token not used yet → user id
	status     int                // when non-zero, every request gets it
	userCalls  int
	keyFetches int
	grants     []string
	logouts    int
	emails     []Email
}

// Email is a message Auth would have sent: a link to choose a new password
// ("recovery") or to confirm a new account ("signup"), with the address it
// leads back to.
type Email struct {
	Kind, To, RedirectTo string
}

type account struct{ password, userID string }

// signingKeyID names Auth's signing key in its JWKS and its tokens' headers.
const signingKeyID = "apptest-key-1"

// StartSupabaseAuth runs the stand-in until the test ends.
func StartSupabaseAuth(tb testing.TB) *SupabaseAuth {
	tb.Helper()
	a := &SupabaseAuth{
		AnonKey: "test-anon-key", key: newSigningKey(tb), tokenTTL: time.Hour,
		accounts: map[string]account{}, live: map[string]string{}, refresh: map[string]string{},
	}
	a.jwks = publicJWKS(tb, a.key)
	a.server = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.server.URL
	tb.Cleanup(a.server.Close)
	return a
}

func newSigningKey(tb testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// AddAccount lets the user sign in with email and password.
func (a *SupabaseAuth) AddAccount(email, password, userID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.accounts[email] = account{password: password, userID: userID}
}

// SetTokenTTL sets how long the access tokens Auth issues from now on last
// (an hour until set).
func (a *SupabaseAuth) SetTokenTTL(ttl time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokenTTL = ttl
}

// Token is an access token for the user as Auth issues it, signed with the
// key its JWKS publishes, for a session not yet known to GET /auth/v1/user.
func (a *SupabaseAuth) Token(tb testing.TB, userID, email string) string {
	tb.Helper()
	a.mu.Lock()
	ttl := a.tokenTTL
	a.mu.Unlock()
	token, err := a.sign(a.key, userID, email, ttl)
	if err != nil {
		tb.Fatal(err)
	}
	return token
}

// ForgedToken is a token that names Auth's signing key but is signed by
// another, as an attacker would make one.
func (a *SupabaseAuth) ForgedToken(tb testing.TB, userID string) string {
	tb.Helper()
	token, err := a.sign(newSigningKey(tb), userID, "", time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return token
}

func (a *SupabaseAuth) sign(key *ecdsa.PrivateKey, userID, email string, ttl time.Duration) (string, error) {
	now := time.Now()
	token := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": a.URL + "/auth/v1", "sub": userID, "email": email, "aud": "authenticated", "role": "authenticated",
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(),
	})
	token.Header["kid"] = signingKeyID
	return token.SignedString(key)
}

// SignIn gives token a live session for userID.
func (a *SupabaseAuth) SignIn(token, userID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live[token] = userID
}

// SignOut ends token's session, as signing out in the app does.
func (a *SupabaseAuth) SignOut(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.live, token)
}

// FailWith makes every request answer status (0: healthy again).
func (a *SupabaseAuth) FailWith(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = status
}

// Stop makes Auth unreachable: connections are refused from now on.
func (a *SupabaseAuth) Stop() { a.server.Close() }

// Calls is how many times GET /auth/v1/user was asked.
func (a *SupabaseAuth) Calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.userCalls
}

// KeyFetches is how many times the JWKS was fetched.
func (a *SupabaseAuth) KeyFetches() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keyFetches
}

// Grants are the grant types of the token requests so far, in order.
func (a *SupabaseAuth) Grants() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.grants...)
}

// Emails are the emails sent so far, in order.
func (a *SupabaseAuth) Emails() []Email {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Email(nil), a.emails...)
}

// Password is the account's password now ("" for an unknown email).
func (a *SupabaseAuth) Password(email string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.accounts[email].password
}

// Logouts is how many times a client signed out.
func (a *SupabaseAuth) Logouts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.logouts
}

func (a *SupabaseAuth) serve(w http.ResponseWriter, r *http.Request) {
	// Auth answers CORS for any origin: the web client calls it from its
	// own page.
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	h.Set("Access-Control-Allow-Headers", "apikey, authorization, content-type")
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, OPTIONS")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	route := r.Method + " " + r.URL.Path
	if route == "GET /auth/v1/user" {
		a.userCalls++
	}
	// Supabase's answers: 401 for a request it cannot authenticate, 403
	// session_not_found once the user signed out.
	switch {
	case a.status != 0:
		reply(w, a.status, map[string]any{"code": a.status, "msg": http.StatusText(a.status)})
	case route == "GET /auth/v1/.well-known/jwks.json":
		a.keyFetches++
		reply(w, http.StatusOK, a.jwks)
	case r.Header.Get("apikey") != a.AnonKey:
		reply(w, http.StatusUnauthorized, map[string]any{"message": "Invalid API key"})
	case route == "GET /auth/v1/user":
		a.serveUser(w, r)
	case route == "POST /auth/v1/token":
		a.serveToken(w, r)
	case route == "POST /auth/v1/recover":
		a.serveRecover(w, r)
	case route == "POST /auth/v1/signup":
		a.serveSignup(w, r)
	case route == "PUT /auth/v1/user":
		a.serveNewPassword(w, r)
	case route == "POST /auth/v1/logout":
		a.logouts++
		if userID, live := a.live[bearer(r)]; live {
			a.endSessions(userID)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		reply(w, http.StatusNotFound, map[string]any{"code": 404, "msg": "not found"})
	}
}

func (a *SupabaseAuth) serveUser(w http.ResponseWriter, r *http.Request) {
	token := bearer(r)
	userID, live := a.live[token]
	switch {
	case token == "":
		reply(w, http.StatusUnauthorized, map[string]any{"code": 401, "error_code": "no_authorization",
			"msg": "This endpoint requires a valid Bearer token"})
	case !live:
		reply(w, http.StatusForbidden, map[string]any{"code": 403, "error_code": "session_not_found",
			"msg": "Session from session_id claim in JWT does not exist"})
	default:
		reply(w, http.StatusOK, map[string]any{"id": userID, "aud": "authenticated", "role": "authenticated"})
	}
}

func (a *SupabaseAuth) serveToken(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Email, Password string
		RefreshToken    string `json:"refresh_token"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	grant := r.URL.Query().Get("grant_type")
	a.grants = append(a.grants, grant)
	var userID, email string
	switch grant {
	case "password":
		acct, ok := a.accounts[body.Email]
		if !ok || acct.password != body.Password {
			reply(w, http.StatusBadRequest, map[string]any{"code": 400, "error_code": "invalid_credentials", "msg": "Invalid login credentials"})
			return
		}
		userID, email = acct.userID, body.Email
	case "refresh_token":
		var ok bool
		if userID, ok = a.refresh[body.RefreshToken]; !ok {
			reply(w, http.StatusBadRequest, map[string]any{"code": 400, "error_code": "refresh_token_not_found", "msg": "Invalid Refresh Token"})
			return
		}
		delete(a.refresh, body.RefreshToken) // each refresh token is used once
		email = a.emailOf(userID)
	default:
		reply(w, http.StatusBadRequest, map[string]any{"code": 400, "error_code": "unsupported_grant_type", "msg": "Unsupported grant type"})
		return
	}
	token, err := a.sign(a.key, userID, email, a.tokenTTL)
	if err != nil {
		reply(w, http.StatusInternalServerError, map[string]any{"msg": err.Error()})
		return
	}
	refresh := randomHex(12)
	a.live[token], a.refresh[refresh] = userID, userID
	reply(w, http.StatusOK, map[string]any{
		"access_token": token, "token_type": "bearer", "expires_in": int(a.tokenTTL.Seconds()),
		"expires_at": time.Now().Add(a.tokenTTL).Unix(), "refresh_token": refresh,
		"user": map[string]any{"id": userID, "email": email},
	})
}

// serveRecover sends a link to choose a new password, to an account's
// address only, and answers the same either way, as Auth does, so that the
// answer tells nobody which addresses have an account.
func (a *SupabaseAuth) serveRecover(w http.ResponseWriter, r *http.Request) {
	var body struct{ Email string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Email == "" {
		reply(w, http.StatusBadRequest, map[string]any{"code": 400, "error_code": "validation_failed", "msg": "Password recovery requires an email"})
		return
	}
	if _, ok := a.accounts[body.Email]; ok {
		a.emails = append(a.emails, Email{Kind: "recovery", To: body.Email, RedirectTo: r.URL.Query().Get("redirect_to")})
	}
	reply(w, http.StatusOK, map[string]any{})
}

// serveSignup creates an account that must confirm its address: the
// answer is the new user, with no session, and a confirmation email goes
// out. An address already taken is refused.
func (a *SupabaseAuth) serveSignup(w http.ResponseWriter, r *http.Request) {
	var body struct{ Email, Password string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	switch {
	case body.Email == "" || body.Password == "":
		reply(w, http.StatusBadRequest, map[string]any{"code": 400, "error_code": "validation_failed", "msg": "Signup requires a valid password"})
		return
	case len(body.Password) < 6:
		reply(w, http.StatusUnprocessableEntity, map[string]any{"code": 422, "error_code": "weak_password", "msg": "Password should be at least 6 characters."})
		return
	}
	if _, taken := a.accounts[body.Email]; taken {
		reply(w, http.StatusUnprocessableEntity, map[string]any{"code": 422, "error_code": "user_already_exists", "msg": "User already registered"})
		return
	}
	userID := uuid.NewString()
	a.accounts[body.Email] = account{password: body.Password, userID: userID}
	a.emails = append(a.emails, Email{Kind: "signup", To: body.Email, RedirectTo: r.URL.Query().Get("redirect_to")})
	reply(w, http.StatusOK, map[string]any{"id": userID, "email": body.Email, "aud": "authenticated", "role": "authenticated",
		"confirmation_sent_at": time.Now().UTC().Format(time.RFC3339)})
}

// serveNewPassword sets the password of the user whose session the bearer
// token is.
func (a *SupabaseAuth) serveNewPassword(w http.ResponseWriter, r *http.Request) {
	userID, live := a.live[bearer(r)]
	if !live {
		reply(w, http.StatusUnauthorized, map[string]any{"code": 401, "error_code": "no_authorization", "msg": "This endpoint requires a valid Bearer token"})
		return
	}
	var body struct{ Password string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	if len(body.Password) < 6 {
		reply(w, http.StatusUnprocessableEntity, map[string]any{"code": 422, "error_code": "weak_password", "msg": "Password should be at least 6 characters."})
		return
	}
	email := a.emailOf(userID)
	a.accounts[email] = account{password: body.Password, userID: userID}
	reply(w, http.StatusOK, map[string]any{"id": userID, "email": email})
}

func (a *SupabaseAuth) emailOf(userID string) string {
	for email, acct := range a.accounts {
		if acct.userID == userID {
			return email
		}
	}
	return ""
}

// endSessions signs the user out everywhere, as the web client's sign-out
// does: no token or refresh token of theirs works any more.
func (a *SupabaseAuth) endSessions(userID string) {
	for _, sessions := range []map[string]string{a.live, a.refresh} {
		for token, owner := range sessions {
			if owner == userID {
				delete(sessions, token)
			}
		}
	}
}

// publicJWKS is the JSON Web Key Set that publishes key's public half.
func publicJWKS(tb testing.TB, key *ecdsa.PrivateKey) map[string]any {
	b64 := base64.RawURLEncoding.EncodeToString
	point, err := key.PublicKey.ECDH()
	if err != nil {
		tb.Fatal(err)
	}
	xy := point.Bytes()[1:] // after the 0x04 of an uncompressed point
	return map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": signingKeyID, "alg": "ES256", "use": "sig",
		"x": b64(xy[:32]), "y": b64(xy[32:]),
	}}}
}

// bearer is the request's bearer token, or "".
func bearer(r *http.Request) string {
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return token
	}
	return ""
}

func reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
