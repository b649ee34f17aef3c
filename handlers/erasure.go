package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// eraseLearner removes the learner and everything derived from what was
// said about them, and answers with the receipt.
func (h *handler) eraseLearner(c echo.Context) error {
	learnerID, err := learnerIDParam(c)
	if err != nil {
		return err
	}
	erasure, err := h.svc.EraseLearner(c.Request().Context(), learnerID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "erasure": erasure})
}

// eraseAccount removes everything of the caller's and answers with the
// receipt, which is not kept.
func (h *handler) eraseAccount(c echo.Context) error {
	erasure, err := h.svc.EraseAccount(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "erasure": erasure})
}

// listErasures lists the receipts of the caller's erased learners, newest
// first.
func (h *handler) listErasures(c echo.Context) error {
	limit, err := limitParam(c, mentor.MaxErasureList)
	if err != nil {
		return err
	}
	erasures, err := h.svc.Erasures(c.Request().Context(), limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "count": len(erasures), "erasures": erasures})
}
