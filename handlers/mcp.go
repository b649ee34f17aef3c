package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// serveMCP hands a request that passed auth and admission to the MCP
// endpoint (package mcpserver).
func serveMCP(endpoint http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		res, req := c.Response(), c.Request()
		// The SDK marks its answers no-cache, which still lets a cache store
		// them; they carry a facilitator's data, like every answer here.
		res.Before(func() { res.Header().Set("Cache-Control", "no-store") })
		// The request's id, for the log line of a failed tool call.
		req.Header.Set(echo.HeaderXRequestID, res.Header().Get(echo.HeaderXRequestID))
		endpoint.ServeHTTP(res, req)
		return nil
	}
}
