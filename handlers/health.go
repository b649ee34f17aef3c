package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// health answers 200 when the database answers, and the database's error
// (a 503) otherwise.
func (h *handler) health(c echo.Context) error {
	if err := h.db.Ping(c.Request().Context()); err != nil {
		return err
	}
	return answer(c, http.StatusOK, "status", "ok")
}
