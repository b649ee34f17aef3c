package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
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

// consolidate queues a consolidation of the learner's memories: 202 with
// the run, which the worker takes up within seconds.
func (h *handler) consolidate(c echo.Context) error {
	learnerID, err := mentor.ParseLearnerID(c.Param("id"))
	if err != nil || learnerID == nil {
		return mentor.Errorf(mentor.CodeInvalid, "learner id must be a uuid")
	}
	run, err := h.svc.Consolidate(c.Request().Context(), *learnerID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"success": true, "run": run})
}

// listConsolidations is the audit trail: one learner's runs
// (learner_id=<uuid>) or every learner's, newest first.
func (h *handler) listConsolidations(c echo.Context) error {
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	limit, err := limitParam(c, mentor.MaxConsolidationList)
	if err != nil {
		return err
	}
	runs, err := h.svc.Consolidations(c.Request().Context(), learnerID, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "count": len(runs), "runs": runs})
}
