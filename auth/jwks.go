package auth

// The JWKS cache is built on github.com/MicahParks/jwkset's key parsing
// rather than on keyfunc's HTTP storage. keyfunc refreshes on an unknown kid
// through a rate.Limiter that callers *wait* on (up to a minute by default),
// so a stream of tokens with made-up kids would park request goroutines, and
// its refresh interval is not driven by an injectable clock. Here an unknown
// kid causes at most one fetch per minRefreshInterval; every other request
// that misses in that window is refused at once, except those arriving while
// a fetch is in flight, which wait for it (bounded by fetchTimeout) so that a
// genuinely new key is picked up by all of them.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
)

const (
	// minRefreshInterval is the least time between two fetches caused by
	// unknown kids, so spraying random kids cannot make us hammer Supabase.
	minRefreshInterval = 5 * time.Second
	// refreshInterval is how often the keys are refetched in the
	// background, so that keys Supabase revokes stop being accepted.
	refreshInterval = 10 * time.Minute
	// retryInterval replaces refreshInterval after a failed fetch, so a
	// service that started while Supabase was unreachable gets its keys soon.
	retryInterval = 30 * time.Second
	// fetchTimeout bounds one JWKS request, and so how long a request with
	// an unknown kid can wait for a refresh.
	fetchTimeout = 5 * time.Second
	// maxJWKSBytes bounds the JWKS response; Supabase's is a few hundred
	// bytes.
	maxJWKSBytes = 1 << 20
	// minRSABits refuses RSA keys too short to trust.
	minRSABits = 2048
)

// publicKey is a JWKS key usable for exactly one algorithm.
type publicKey struct {
	alg string // algES256 or algRS256
	key crypto.PublicKey
}

// jwksKeys holds the public keys of the Supabase project by kid.
type jwksKeys struct {
	url    string
	client *http.Client
	now    func() time.Time
	ctx    context.Context // ends with the verifier; bounds refreshes made by Verify

	mu   sync.RWMutex
	keys map[string]publicKey

	// fetchMu serialises fetches; lastFetch (guarded by it) is when the
	// last one started, successful or not.
	fetchMu   sync.Mutex
	lastFetch time.Time
}

// errUnknownKID refuses a token signed with a key the JWKS does not hold.
var errUnknownKID = errors.New("no JWKS key with the token's kid")

func newJWKSKeys(ctx context.Context, url string, client *http.Client, now func() time.Time) *jwksKeys {
	return &jwksKeys{url: url, client: client, now: now, ctx: ctx, keys: map[string]publicKey{}}
}

// lookup returns the key with the given kid, refreshing the set once if the
// kid is unknown: Supabase may have rotated to a key we have not seen yet.
func (j *jwksKeys) lookup(kid string) (publicKey, error) {
	if k, ok := j.get(kid); ok {
		return k, nil
	}
	j.refresh(j.ctx, false)
	if k, ok := j.get(kid); ok {
		return k, nil
	}
	return publicKey{}, fmt.Errorf("%w %q", errUnknownKID, kid)
}

func (j *jwksKeys) get(kid string) (publicKey, bool) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	k, ok := j.keys[kid]
	return k, ok
}

// refresh fetches the JWKS and replaces the keys with it. Unless forced it
// does nothing when a fetch started less than minRefreshInterval ago; callers
// that queued behind a fetch in flight then find its result. A failed fetch
// keeps the previous keys. It reports whether the keys were replaced.
func (j *jwksKeys) refresh(ctx context.Context, force bool) bool {
	j.fetchMu.Lock()
	defer j.fetchMu.Unlock()
	now := j.now()
	// A clock that went backwards (since < 0) does not block refreshes.
	if since := now.Sub(j.lastFetch); !force && !j.lastFetch.IsZero() && since >= 0 && since < minRefreshInterval {
		return false
	}
	j.lastFetch = now

	keys, err := j.fetch(ctx)
	if err != nil {
		slog.Default().WarnContext(ctx, "auth: fetching the Supabase JWKS failed; keeping the keys we have",
			"url", j.url, "error", err)
		return false
	}
	j.mu.Lock()
	j.keys = keys
	j.mu.Unlock()
	return true
}

// refreshLoop refetches the keys until ctx ends.
func (j *jwksKeys) refreshLoop(ctx context.Context) {
	wait := refreshInterval
	if len(j.snapshot()) == 0 {
		wait = retryInterval
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		wait = refreshInterval
		if !j.refresh(ctx, true) {
			wait = retryInterval
		}
		timer.Reset(wait)
	}
}

func (j *jwksKeys) snapshot() map[string]publicKey {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.keys
}

// fetch downloads and parses the JWKS.
func (j *jwksKeys) fetch(ctx context.Context) (map[string]publicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS endpoint answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the JWKS: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS larger than %d bytes", maxJWKSBytes)
	}
	return parseJWKS(body)
}

// parseJWKS keeps the keys of the set that can verify ES256 or RS256 tokens.
// A key we cannot use is skipped rather than failing the whole set, so one
// odd entry cannot lock every user out. Symmetric ("oct") keys are never
// taken from a JWKS: HS256 is verified with the configured secret only.
func parseJWKS(body []byte) (map[string]publicKey, error) {
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("decoding the JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New("JWKS has no \"keys\" member")
	}
	keys := make(map[string]publicKey, len(set.Keys))
	for _, m := range set.Keys {
		k, err := usableKey(m)
		if err != nil {
			slog.Default().Warn("auth: skipping a JWKS key", "kid", m.KID, "error", err)
			continue
		}
		keys[m.KID] = k
	}
	return keys, nil
}

// usableKey turns one JWK into a key for a single algorithm, or says why it
// cannot be used to verify our tokens.
func usableKey(m jwkset.JWKMarshal) (publicKey, error) {
	if m.KID == "" {
		// Tokens select their key by kid; a key without one is unreachable.
		return publicKey{}, errors.New("no kid")
	}
	if m.USE != "" && m.USE != jwkset.UseSig {
		return publicKey{}, fmt.Errorf("use %q", m.USE)
	}
	if len(m.KEYOPS) > 0 && !slices.Contains(m.KEYOPS, jwkset.KeyOpsVerify) {
		return publicKey{}, fmt.Errorf("key_ops %v without verify", m.KEYOPS)
	}
	// Private: false makes jwkset ignore any private members, so only
	// public key material is ever loaded.
	jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: false}, jwkset.JWKValidateOptions{})
	if err != nil {
		return publicKey{}, err
	}
	switch key := jwk.Key().(type) {
	case *ecdsa.PublicKey:
		if key.Curve != elliptic.P256() {
			return publicKey{}, fmt.Errorf("EC curve %s, want P-256", key.Curve.Params().Name)
		}
		if m.ALG != "" && m.ALG != jwkset.AlgES256 {
			return publicKey{}, fmt.Errorf("P-256 key with alg %q", m.ALG)
		}
		return publicKey{alg: algES256, key: key}, nil
	case *rsa.PublicKey:
		if key.N.BitLen() < minRSABits {
			return publicKey{}, fmt.Errorf("RSA key of %d bits", key.N.BitLen())
		}
		if m.ALG != "" && m.ALG != jwkset.AlgRS256 {
			return publicKey{}, fmt.Errorf("RSA key with alg %q", m.ALG)
		}
		return publicKey{alg: algRS256, key: key}, nil
	default:
		return publicKey{}, fmt.Errorf("unsupported key type %T", key)
	}
}
