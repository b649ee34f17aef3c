package handlers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/mail"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/auth"
	"mentormemory/memory"
	"mentormemory/web"
)

// DemoFacilitatorID is the facilitator scripts/dev.sh creates (dana@example.com
// with learners Emma and Max); dev sign-in mints tokens for it alone.
const DemoFacilitatorID = "11111111-1111-4111-8111-111111111111"

const (
	demoFacilitatorEmail = "dana@example.com"
	devTokenTTL          = 24 * time.Hour
)

// WebConfig is what the browser client is told and allowed.
type WebConfig struct {
	// SupabaseURL and SupabaseAnonKey, both public, let the page sign users
	// in with Supabase Auth; SupabaseURL is also the one origin besides our
	// own that the page may connect to.
	SupabaseURL     string
	SupabaseAnonKey string
	// DevMode with a DevTokenSecret enables POST /api/dev/token. Both are
	// needed: dev mode alone has nothing to sign with.
	DevMode        bool
	DevTokenSecret string
}

func (w WebConfig) devSignIn() bool { return w.DevMode && w.DevTokenSecret != "" }

// registerWeb adds the client's routes: its configuration, dev sign-in and
// one route per static file.
func registerWeb(e *echo.Echo, cfg WebConfig, modelConfigured bool) {
	site, err := loadSite(web.Static())
	if err != nil {
		// The files are embedded at build time; failing to read them is a
		// broken build, not a runtime condition.
		panic("handlers: " + err.Error())
	}
	headers := securityHeaders(contentSecurityPolicy(cfg.SupabaseURL))

	e.GET("/api/config", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]any{
			"success":           true,
			"dev_mode":          cfg.devSignIn(),
			"supabase_url":      cfg.SupabaseURL,
			"supabase_anon_key": cfg.SupabaseAnonKey,
			"model_configured":  modelConfigured,
		})
	}, headers)
	// Off, the route does not exist at all, so it answers the same 404 as
	// any unknown path and reveals nothing.
	if cfg.devSignIn() {
		e.POST("/api/dev/token", devToken(cfg.DevTokenSecret), headers)
	}
	// One route per file rather than a catch-all: Echo's catch-all routes
	// (GET "/*" or RouteNotFound) would turn a wrong method on an unknown
	// path, or on a known /api one, into the wrong status. Unknown paths
	// keep the JSON 404; the page has no client-side routes to fall back for.
	getOrHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getOrHead, "/", site.handler("index.html"), headers)
	for name := range site.files {
		e.Match(getOrHead, "/"+name, site.handler(name), headers)
	}
}

// devToken mints a token for the demo facilitator. It touches no database:
// the facilitator must exist already (scripts/dev.sh seeds it), and a route
// that anyone reaching a dev server can call should not write anything.
func devToken(secret string) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Email string `json:"email"`
		}
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return memory.Errorf(memory.CodeTooLarge, "Request body too large (at most %d bytes)", tooLarge.Limit)
			}
			return memory.Errorf(memory.CodeInvalid, "Could not read the request body")
		}
		// The body is optional: the page's button sends none.
		if len(bytes.TrimSpace(body)) > 0 {
			c.Request().Body = io.NopCloser(bytes.NewReader(body))
			if err := decodeJSON(c, &req); err != nil {
				return err
			}
		}
		email := strings.TrimSpace(req.Email)
		if email == "" {
			email = demoFacilitatorEmail
		} else if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
			return memory.Errorf(memory.CodeInvalid, "email must be a plain address such as dana@example.com")
		}
		expires := time.Now().Add(devTokenTTL)
		token, err := auth.MintHS256(secret, DemoFacilitatorID, email, devTokenTTL)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]any{
			"success":    true,
			"token":      token,
			"user_id":    DemoFacilitatorID,
			"email":      email,
			"expires_at": expires.Unix(),
		})
	}
}

// contentSecurityPolicy allows scripts, styles and connections to our own
// origin only, plus connections to the Supabase project for sign-in. The
// page has no inline script or style, so neither needs 'unsafe-inline'.
func contentSecurityPolicy(supabaseURL string) string {
	connect := "'self'"
	if origin := originOf(supabaseURL); origin != "" {
		connect += " " + origin
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self'",
		"connect-src " + connect,
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
}

// originOf reduces a URL to scheme://host[:port]: a CSP source with a path
// would allow only that path, and Supabase Auth lives under /auth/v1.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func securityHeaders(csp string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Content-Type-Options", "nosniff")
			// Search text and learner ids travel in our URLs; no other
			// site needs to see them.
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("X-Frame-Options", "DENY")
			return next(c)
		}
	}
}

// asset is one file of the client, read once at start.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

type site struct {
	files map[string]asset
}

// contentTypes is explicit rather than mime.TypeByExtension, whose answer
// depends on the host's /etc/mime.types; a module script served with the
// wrong type does not run.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
}

func loadSite(fsys fs.FS) (*site, error) {
	s := &site{files: map[string]asset{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		contentType, ok := contentTypes[path.Ext(name)]
		if !ok {
			contentType = "application/octet-stream"
		}
		sum := sha256.Sum256(body)
		s.files[name] = asset{body: body, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := s.files["index.html"]; !ok {
		return nil, errors.New("the web client has no index.html")
	}
	return s, nil
}

// handler serves one file.
func (s *site) handler(name string) echo.HandlerFunc {
	a := s.files[name]
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, a.contentType)
		// No build step means no content-hashed file names, so every file
		// is revalidated (cheaply, by ETag) and a deploy is seen at the
		// next load.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		http.ServeContent(c.Response(), c.Request(), name, time.Time{}, bytes.NewReader(a.body))
		return nil
	}
}
