package handlers

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// Counselor is Mr. Mentor's chat (see package counselor).
type Counselor interface {
	Chat(ctx context.Context, req mentor.ChatRequest, listener mentor.ChatListener) (mentor.ChatReply, error)
}

// maxChatHistory bounds the session history a chat request may carry: a
// long session's 500 exchanges. The counselor sends the model only what
// fits its token budget, and the 2 MiB body limit (MaxBodyBytes) bounds
// the bytes, so a client may resend a whole session.
const maxChatHistory = 1000

func (h *handler) counselorChat(c echo.Context) error {
	var req struct {
		Message   string          `json:"message"`
		LearnerID optionalLearner `json:"learner_id"`
		History   []postedTurn    `json:"history"`
		TimeZone  string          `json:"time_zone"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	message := strings.TrimSpace(req.Message)
	if message == "" {
		return mentor.Errorf(mentor.CodeInvalid, "Message required")
	}
	if utf8.RuneCountInString(message) > mentor.MaxTurnChars || strings.ContainsRune(message, 0) {
		return mentor.Errorf(mentor.CodeInvalid, "Message must be text of at most %d characters", mentor.MaxTurnChars)
	}
	if len(req.History) > maxChatHistory {
		return mentor.Errorf(mentor.CodeInvalid, "History too long: send at most the last %d turns", maxChatHistory)
	}
	history := make([]mentor.Turn, len(req.History))
	for i, t := range req.History {
		history[i] = mentor.Turn{Role: t.Role, Content: t.Content}
	}
	if len(history) > 0 {
		var err error
		if history, err = mentor.CheckTurns(history); err != nil {
			return err
		}
	}
	zone, err := mentor.ParseTimeZone(req.TimeZone)
	if err != nil {
		return err
	}
	if h.counselor == nil {
		return mentor.Errorf(mentor.CodeUnavailable,
			"No mentor model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server) and restart")
	}
	chat := mentor.ChatRequest{Message: message, LearnerID: req.LearnerID.id, History: history, TimeZone: zone}
	if wantsEventStream(c.Request()) {
		return h.streamReply(c, chat)
	}
	reply, err := h.counselor.Chat(c.Request().Context(), chat, nil)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, chatAnswer{true, reply})
}

// chatAnswer is the counselor's answer: the reply with success, as JSON or
// as a stream's last event.
type chatAnswer struct {
	Success bool `json:"success"`
	mentor.ChatReply
}
