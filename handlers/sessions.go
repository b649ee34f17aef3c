package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

func (h *handler) endSession(c echo.Context) error {
	var req struct {
		LearnerID optionalLearner `json:"learner_id"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	ended, err := h.svc.EndSession(c.Request().Context(), req.LearnerID.id)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "session", ended)
}

// openingContext answers from the stored opening. What is relevant, and
// which threads' days have passed, is decided for the facilitator's day:
// the optional date (YYYY-MM-DD) in the optional time_zone (IANA, UTC when
// absent), by default today there.
func (h *handler) openingContext(c echo.Context) error {
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	zone, err := mentor.ParseTimeZone(c.QueryParam("time_zone"))
	if err != nil {
		return err
	}
	day := time.Now().In(zone)
	if raw := strings.TrimSpace(c.QueryParam("date")); raw != "" {
		if day, err = time.ParseInLocation(time.DateOnly, raw, zone); err != nil {
			return mentor.Errorf(mentor.CodeInvalid, "date must be YYYY-MM-DD")
		}
	}
	opening, err := h.svc.OpeningContext(c.Request().Context(), learnerID, day)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "opening", opening)
}
