package handlers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/web"
)

// serveStaticFiles adds one route per file of the web client. One route
// per file rather than a catch-all: Echo's catch-all routes (GET "/*" or
// RouteNotFound) would turn a wrong method on an unknown path, or on a
// known /api one, into the wrong status. Unknown paths keep the JSON 404;
// the page has no client-side routes to fall back for.
func serveStaticFiles(e *echo.Echo, headers echo.MiddlewareFunc) {
	site, err := loadSite(web.Static())
	if err != nil {
		// The files are embedded at build time; failing to read them is a
		// broken build, not a runtime condition.
		panic("handlers: " + err.Error())
	}
	getOrHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getOrHead, "/", site.handler("index.html"), headers)
	for name := range site.files {
		e.Match(getOrHead, "/"+name, site.handler(name), headers)
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
