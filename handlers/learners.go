package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

func (h *handler) listLearners(c echo.Context) error {
	learners, err := h.svc.Learners(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "learners": learners})
}

func (h *handler) createLearner(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	learner, err := h.svc.AddLearner(c.Request().Context(), req.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"success": true, "learner": learner})
}
