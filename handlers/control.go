package handlers

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// What the facilitator sees of the memory's learning and controls: a
// memory's sources, whether learning runs now, forgetting by type or
// period, and the learning and retention settings.

// memorySources lists the conversation turns a memory was learnt from.
func (h *handler) memorySources(c echo.Context) error {
	id, err := memoryIDParam(c)
	if err != nil {
		return err
	}
	sources, err := h.svc.MemorySources(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success bool `json:"success"`
		mentor.MemorySources
	}{true, sources})
}

// forgetMemories forgets one conversation's memories (learner_id, required:
// a uuid, or null for the general ones), of one type or all, learnt in a
// period (after inclusive, before exclusive).
func (h *handler) forgetMemories(c echo.Context) error {
	if !c.QueryParams().Has("learner_id") {
		return mentor.Errorf(mentor.CodeInvalid, "learner_id is required: a learner's uuid, or null for the general memories")
	}
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	q := mentor.ForgetQuery{LearnerID: learnerID, Type: mentor.MemoryType(c.QueryParam("type"))}
	if c.QueryParams().Has("type") && q.Type == "" {
		return mentor.Errorf(mentor.CodeInvalid, "type must be one of academic, personal, preference, context")
	}
	if q.Before, err = mentor.ParseTimeBound(c.QueryParam("before"), "before"); err != nil {
		return err
	}
	if q.After, err = mentor.ParseTimeBound(c.QueryParam("after"), "after"); err != nil {
		return err
	}
	removed, err := h.svc.ForgetMemories(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "removed", removed)
}

// learningNow says whether memory is learning about the learner right now.
func (h *handler) learningNow(c echo.Context) error {
	learnerID, err := learnerIDParam(c)
	if err != nil {
		return err
	}
	now, err := h.svc.LearningNow(c.Request().Context(), learnerID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success bool `json:"success"`
		mentor.LearningNow
	}{true, now})
}

// learnerSettings is the learner's own learning setting beside the
// account's: the mentor learns about the learner only when both are on.
func (h *handler) learnerSettings(c echo.Context) error {
	return callAndAnswer(c, learnerIDParam, h.svc.LearnerSettings, http.StatusOK, "settings")
}

// writeLearnerSettings turns learning about the learner on or off:
// {"learning": bool}.
func (h *handler) writeLearnerSettings(c echo.Context) error {
	learnerID, err := learnerIDParam(c)
	if err != nil {
		return err
	}
	var req struct {
		Learning *bool `json:"learning"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Learning == nil {
		return mentor.Errorf(mentor.CodeInvalid, "learning is required: true or false")
	}
	settings, err := h.svc.SetLearnerLearning(c.Request().Context(), learnerID, *req.Learning)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "settings", settings)
}

// accountSettings is the account's learning and retention settings.
func (h *handler) accountSettings(c echo.Context) error {
	settings, err := h.svc.AccountSettings(c.Request().Context())
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "settings", settings)
}

// writeAccountSettings changes what the body names: {"learning": bool,
// "retention_days": days or null}; what it leaves out stays.
func (h *handler) writeAccountSettings(c echo.Context) error {
	var req struct {
		Learning      *bool         `json:"learning"`
		RetentionDays retentionDays `json:"retention_days"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	settings, err := h.svc.ChangeAccountSettings(c.Request().Context(), mentor.AccountSettingsChange{
		Learning: req.Learning, SetRetention: req.RetentionDays.set, RetentionDays: req.RetentionDays.days,
	})
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "settings", settings)
}

// retentionDays decodes retention_days: a whole number of days, null (no
// retention), or absent (unchanged).
type retentionDays struct {
	set  bool
	days *int
}

func (r *retentionDays) UnmarshalJSON(b []byte) error {
	r.set = true
	if string(b) == "null" {
		return nil
	}
	var days int
	if err := json.Unmarshal(b, &days); err != nil {
		return fieldError("retention_days must be a whole number of days, or null to keep memories")
	}
	r.days = &days
	return nil
}
