package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// listActions lists the changes the mentor proposed from the chat, newest
// first: ?status=pending for those still waiting for the facilitator.
func (h *handler) listActions(c echo.Context) error {
	limit, err := limitParam(c, mentor.MaxActionList)
	if err != nil {
		return err
	}
	actions, err := h.svc.Actions(c.Request().Context(), mentor.ActionQuery{Status: c.QueryParam("status"), Limit: limit})
	if err != nil {
		return err
	}
	return answerList(c, "actions", actions)
}

// confirmAction applies a pending action: the facilitator's click is the
// only way a forget or a correction the mentor proposed takes effect.
func (h *handler) confirmAction(c echo.Context) error {
	return callAndAnswer(c, actionIDParam, h.svc.ConfirmAction, http.StatusOK, "action")
}

// cancelAction drops a pending action; nothing in the memory changes.
func (h *handler) cancelAction(c echo.Context) error {
	return callAndAnswer(c, actionIDParam, h.svc.CancelAction, http.StatusOK, "action")
}
