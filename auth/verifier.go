package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"mentormemory/mentor"
)

// MaxTokenBytes bounds the raw token. Supabase access tokens are well under
// 2 KiB; anything much larger is refused before any base64 or JSON decoding,
// so an oversized header cannot cost us more than a length comparison.
const MaxTokenBytes = 8 << 10

// DefaultLeeway is the clock skew allowed on exp, nbf and iat when
// Config.Leeway is zero.
const DefaultLeeway = 30 * time.Second

// audience is the aud Supabase puts in the access tokens of signed-in users.
const audience = "authenticated"

// The signing algorithms this service accepts. Supabase signs with HS256
// (legacy JWT secret) or with an ES256 or RS256 signing key.
const (
	algHS256 = "HS256"
	algES256 = "ES256"
	algRS256 = "RS256"
)

// Why a token is refused before or while its signature is checked, besides
// the reasons the jwt library gives. A token's shape:
var (
	errTooLong = errors.New("token longer than the size limit")
	errEmpty   = errors.New("empty token")
)

// Its signing algorithm and key:
var (
	errNoSecret       = errors.New("HS256 token but no JWT secret configured")
	errNoJWKS         = errors.New("asymmetric token but no JWKS configured")
	errNoKID          = errors.New("asymmetric token without a kid header")
	errKeyAlgMismatch = errors.New("token alg does not match the JWKS key")
	errUnexpectedAlg  = errors.New("unexpected signing algorithm")
)

// Config selects the keys tokens are verified with.
type Config struct {
	JWTSecret   string           // SUPABASE_JWT_SECRET; enables HS256 when non-empty
	SupabaseURL string           // SUPABASE_URL; enables ES256/RS256 from SupabaseURL + "/auth/v1/.well-known/jwks.json" when non-empty
	Issuer      string           // when non-empty, the iss claim must equal it
	HTTPClient  *http.Client     // optional, for fetching the JWKS
	Leeway      time.Duration    // clock skew allowed on exp/nbf/iat; default 30s when zero
	Now         func() time.Time // optional injectable clock for tests
}

// Verifier checks Supabase access tokens. It is safe for concurrent use.
type Verifier struct {
	secret []byte    // nil when HS256 is disabled
	jwks   *jwksKeys // nil when ES256/RS256 are disabled
	parser *jwt.Parser

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// NewVerifier builds a verifier from cfg. It fails when neither a secret nor
// a Supabase URL is configured, since it could then accept nothing.
//
// With a Supabase URL it fetches the JWKS once, bounded by ctx. A failure to
// reach Supabase does not fail start-up: the keys are fetched again in the
// background and whenever a token names a kid we do not know. ctx only bounds
// that first fetch; Close stops the background refresh.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.JWTSecret == "" && cfg.SupabaseURL == "" {
		return nil, errors.New("auth: neither a JWT secret nor a Supabase URL is configured")
	}
	if cfg.Leeway < 0 {
		return nil, fmt.Errorf("auth: negative leeway %v", cfg.Leeway)
	}
	leeway := cfg.Leeway
	if leeway == 0 {
		leeway = DefaultLeeway
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}

	v := &Verifier{stop: func() {}}

	// The accepted algorithms follow from the configured keys, so a token
	// whose alg has no key configured is refused by the parser before our
	// key lookup even runs.
	var methods []string
	if cfg.JWTSecret != "" {
		v.secret = []byte(cfg.JWTSecret)
		methods = append(methods, algHS256)
	}
	if cfg.SupabaseURL != "" {
		jwksURL, err := jwksURLFor(cfg.SupabaseURL)
		if err != nil {
			return nil, err
		}
		client := cfg.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: fetchTimeout}
		}
		// The background refresh outlives ctx, which may be a start-up
		// deadline; it ends with Close.
		bg, stop := context.WithCancel(context.WithoutCancel(ctx))
		v.stop = stop
		v.jwks = newJWKSKeys(bg, jwksURL, client, now)
		v.jwks.refresh(ctx, true)
		v.wg.Go(func() { v.jwks.refreshLoop(bg) })
		methods = append(methods, algES256, algRS256)
	}

	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(now),
		jwt.WithAudience(audience),
		// Numbers are kept as json.Number so that the claims handed on to
		// Postgres are the numbers that were signed, not float64 round trips.
		jwt.WithJSONNumber(),
		// Only one base64 spelling of a token verifies, so no variant of a
		// token slips past anything keyed on the token's text.
		jwt.WithStrictDecoding(),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// jwksURLFor derives Supabase's JWKS endpoint from the project URL.
func jwksURLFor(supabaseURL string) (string, error) {
	u, err := url.Parse(strings.TrimRight(supabaseURL, "/"))
	if err != nil {
		return "", fmt.Errorf("auth: invalid Supabase URL: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("auth: invalid Supabase URL %q: want http(s)://host", supabaseURL)
	}
	return u.String() + "/auth/v1/.well-known/jwks.json", nil
}

// Close stops the background JWKS refresh. Verify keeps working with the
// keys already fetched.
func (v *Verifier) Close() {
	v.stop()
	v.wg.Wait()
}

// Verify checks a raw bearer token (without the "Bearer " prefix) and returns
// the caller it identifies. Every failure is a *mentor.Error with code
// CodeUnauthenticated; its Cause says why.
func (v *Verifier) Verify(token string) (mentor.Caller, error) {
	if len(token) > MaxTokenBytes {
		return mentor.Caller{}, invalid(errTooLong)
	}
	if token == "" {
		return mentor.Caller{}, invalid(errEmpty)
	}
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.key); err != nil {
		return mentor.Caller{}, invalid(err)
	}
	c, err := callerFrom(claims)
	if err != nil {
		return mentor.Caller{}, invalid(err)
	}
	return c, nil
}

// key picks the verification key for a token whose alg the parser already
// accepted. Each algorithm has exactly one source of keys: the HMAC secret is
// only ever returned for HS256 and JWKS public keys only for the alg they
// were published for, so no token can make us verify an HMAC with a public
// key or an RSA/EC signature with the secret (algorithm confusion).
func (v *Verifier) key(t *jwt.Token) (any, error) {
	switch alg := t.Method.Alg(); alg {
	case algHS256:
		// Supabase may put a kid on HS256 tokens too; it is irrelevant here.
		if v.secret == nil {
			return nil, errNoSecret
		}
		return v.secret, nil
	case algES256, algRS256:
		if v.jwks == nil {
			return nil, errNoJWKS
		}
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errNoKID
		}
		k, err := v.jwks.lookup(kid)
		if err != nil {
			return nil, err
		}
		if k.alg != alg {
			return nil, fmt.Errorf("%w: token %s, key %q is %s", errKeyAlgMismatch, alg, kid, k.alg)
		}
		return k.key, nil
	default:
		return nil, fmt.Errorf("%w %q", errUnexpectedAlg, alg)
	}
}
