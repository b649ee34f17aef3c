package handlers

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
)

// answer writes the usual successful answer: {"success": true, key: value}
// with status, under the key the API documents for the route (openapi.json).
func answer(c echo.Context, status int, key string, value any) error {
	return c.JSON(status, map[string]any{"success": true, key: value})
}

// answerList writes a page of a list with its count: 200,
// {"success": true, "count": n, key: items}.
func answerList[T any](c echo.Context, key string, items []T) error {
	return c.JSON(http.StatusOK, map[string]any{"success": true, "count": len(items), key: items})
}

// callAndAnswer serves a route that is one call of the service: it reads
// the call's one parameter from the request (the id in the path, a
// learner_id in the query), makes the call, and answers what it returns
// under key. A parameter that does not read and a call that fails are the
// route's error, which renderError renders.
func callAndAnswer[In, Out any](c echo.Context, read func(echo.Context) (In, error),
	call func(context.Context, In) (Out, error), status int, key string) error {
	in, err := read(c)
	if err != nil {
		return err
	}
	out, err := call(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return answer(c, status, key, out)
}
