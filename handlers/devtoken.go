package handlers

import (
	"net"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// DevTokenMinter signs tokens for the demo facilitator. The app holds the
// key; the HTTP layer only asks for a token.
type DevTokenMinter interface {
	// MintDevToken signs a token for the demo facilitator with email, or
	// with the demo facilitator's own email when email is empty.
	MintDevToken(email string) (DevToken, error)
}

// DevToken is a token minted for dev sign-in.
type DevToken struct {
	Token     string
	UserID    string
	Email     string
	ExpiresAt time.Time
}

// loopbackHost reports whether a request's Host names this machine:
// localhost or a loopback address, with any port.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// devToken mints a token for the demo facilitator. It touches no database:
// the facilitator must exist already (`server demo` creates it), and a
// route that anyone reaching a dev server can call should not write
// anything.
func devToken(minter DevTokenMinter) echo.HandlerFunc {
	return func(c echo.Context) error {
		// A page elsewhere could reach a local server through a name of
		// its own that resolves to this machine (DNS rebinding); only a
		// request addressed to this machine itself gets a token.
		if !loopbackHost(c.Request().Host) {
			return mentor.Errorf(mentor.CodeNotFound, "Not found")
		}
		var req struct {
			Email string `json:"email"`
		}
		// The body is optional: the page's button sends none.
		if err := decodeOptionalJSON(c, &req); err != nil {
			return err
		}
		email := strings.TrimSpace(req.Email)
		if email != "" {
			if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
				return mentor.Errorf(mentor.CodeInvalid, "email must be a plain address such as dana@example.com")
			}
		}
		token, err := minter.MintDevToken(email)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{
			"success":    true,
			"token":      token.Token,
			"user_id":    token.UserID,
			"email":      token.Email,
			"expires_at": token.ExpiresAt.Unix(),
		})
	}
}
