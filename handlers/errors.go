package handlers

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

var statusOf = map[mentor.Code]int{
	mentor.CodeInvalid:         http.StatusBadRequest,
	mentor.CodeUnauthenticated: http.StatusUnauthorized,
	mentor.CodeNotFound:        http.StatusNotFound,
	mentor.CodeConflict:        http.StatusConflict,
	mentor.CodeTooLarge:        http.StatusRequestEntityTooLarge,
	mentor.CodeRateLimited:     http.StatusTooManyRequests,
	mentor.CodeUpstream:        http.StatusBadGateway,
	mentor.CodeUnavailable:     http.StatusServiceUnavailable,
	mentor.CodeInternal:        http.StatusInternalServerError,
}

type errorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
}

// renderError renders every error as {"success":false,"error":…}. Only the
// public message leaves the server; requestLogger logs the hidden cause.
func renderError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := describe(err)
	if wait := mentor.RetryAfter(err); wait > 0 {
		// Whole seconds, rounded up: retrying a moment early is refused again.
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	} else if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "1")
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, errorBody{Error: message})
}

func describe(err error) (int, string) {
	var httpErr *echo.HTTPError
	if errors.As(err, &httpErr) {
		// Echo's own errors: unknown route, wrong method, body too large.
		switch httpErr.Code {
		case http.StatusNotFound:
			return httpErr.Code, "Not found"
		case http.StatusMethodNotAllowed:
			return httpErr.Code, "Method not allowed"
		case http.StatusRequestEntityTooLarge:
			return httpErr.Code, "Request body too large"
		}
		if httpErr.Code >= 500 {
			return http.StatusInternalServerError, "Internal error"
		}
		return httpErr.Code, http.StatusText(httpErr.Code)
	}
	code := mentor.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return status, mentor.ErrorMessage(err)
}
