package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// WebConfig is what the browser client is told and allowed.
type WebConfig struct {
	// SupabaseURL and SupabaseAnonKey, both public, let the page sign users
	// in with Supabase Auth; SupabaseURL is also the one origin besides our
	// own that the page may connect to.
	SupabaseURL     string
	SupabaseAnonKey string
	// DevTokens, when set, enables dev sign-in (POST /api/dev/token) for
	// the demo facilitator.
	DevTokens DevTokenMinter
}

// clientConfig tells the page how to sign in and whether the counselor
// can answer.
func clientConfig(web WebConfig, modelConfigured bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{
			"success":           true,
			"dev_mode":          web.DevTokens != nil,
			"supabase_url":      web.SupabaseURL,
			"supabase_anon_key": web.SupabaseAnonKey,
			"model_configured":  modelConfigured,
		})
	}
}
