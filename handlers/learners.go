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
	return answer(c, http.StatusOK, "learners", learners)
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
	return answer(c, http.StatusCreated, "learner", learner)
}

// renameLearner gives one of the caller's learners a new name.
func (h *handler) renameLearner(c echo.Context) error {
	learnerID, err := learnerIDParam(c)
	if err != nil {
		return err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	learner, err := h.svc.RenameLearner(c.Request().Context(), learnerID, req.Name)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "learner", learner)
}

// learnerProfile is the learner's profile as JSON, or with
// format=markdown as a readable page.
func (h *handler) learnerProfile(c echo.Context) error {
	learnerID, err := learnerIDParam(c)
	if err != nil {
		return err
	}
	format := c.QueryParam("format")
	if format != "" && format != "json" && format != "markdown" {
		return mentor.Errorf(mentor.CodeInvalid, "format must be json or markdown")
	}
	profile, err := h.svc.Profile(c.Request().Context(), learnerID)
	if err != nil {
		return err
	}
	if format == "markdown" {
		return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(profile.Markdown()))
	}
	return answer(c, http.StatusOK, "profile", profile)
}

// writeProfileLines replaces the facilitator's own lines of the profile.
func (h *handler) writeProfileLines(c echo.Context) error {
	learnerID, err := learnerIDParam(c)
	if err != nil {
		return err
	}
	var req struct {
		Lines []struct {
			Category string `json:"category"`
			Text     string `json:"text"`
		} `json:"lines"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Lines == nil {
		return mentor.Errorf(mentor.CodeInvalid, "lines is required: a list of {category, text}, empty to remove yours")
	}
	own := make([]mentor.ProfileLine, len(req.Lines))
	for i, l := range req.Lines {
		own[i] = mentor.ProfileLine{Category: l.Category, Text: l.Text}
	}
	profile, err := h.svc.WriteProfileLines(c.Request().Context(), learnerID, own)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "profile", profile)
}

// consolidate queues a consolidation of the learner's memories: 202 with
// the run, which the worker takes up within seconds.
func (h *handler) consolidate(c echo.Context) error {
	return callAndAnswer(c, learnerIDParam, h.svc.Consolidate, http.StatusAccepted, "run")
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
	return answerList(c, "runs", runs)
}
