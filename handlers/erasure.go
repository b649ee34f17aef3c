package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// eraseLearner removes the learner and everything derived from what was
// said about them, and answers with the receipt.
func (h *handler) eraseLearner(c echo.Context) error {
	return callAndAnswer(c, learnerIDParam, h.svc.EraseLearner, http.StatusOK, "erasure")
}

// eraseAccount removes everything of the caller's and answers with the
// receipt, which is not kept.
func (h *handler) eraseAccount(c echo.Context) error {
	erasure, err := h.svc.EraseAccount(c.Request().Context())
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "erasure", erasure)
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
	return answerList(c, "erasures", erasures)
}
