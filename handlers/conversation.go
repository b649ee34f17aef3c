package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

type postedTurn struct {
	ID      clientTurnID `json:"id"`
	Role    string       `json:"role"`
	Content string       `json:"content"`
	// CreatedAt is when the turn was said, for a client importing history
	// (RFC 3339); nil: now. A chat's history ignores it.
	CreatedAt *string `json:"created_at"`
}

// turn is the posted turn, the i-th of its request, as the service takes it.
func (t postedTurn) turn(i int) (mentor.Turn, error) {
	turn := mentor.Turn{ID: string(t.ID), Role: t.Role, Content: t.Content}
	if t.CreatedAt == nil {
		return turn, nil
	}
	at, err := time.Parse(time.RFC3339, *t.CreatedAt)
	if err != nil {
		return turn, mentor.Errorf(mentor.CodeInvalid,
			"Turn %d: created_at must be an RFC 3339 time, such as 2023-12-04T18:30:00Z", i+1)
	}
	turn.CreatedAt = at
	return turn, nil
}

type postConversationRequest struct {
	LearnerID         optionalLearner `json:"learner_id"`
	ConversationTurns []postedTurn    `json:"conversation_turns"`
	ForceRegenerate   bool            `json:"force_regenerate"`
}

type postConversationResponse struct {
	Success      bool                      `json:"success"`
	Conversation mentor.ConversationRecord `json:"conversation_update"`
	Message      string                    `json:"message"`
	Summarizer   string                    `json:"summarizer"`
	TurnsAdded   int                       `json:"turns_added"`
	Archived     bool                      `json:"archived"`
}

func (h *handler) postConversationMemory(c echo.Context) error {
	var req postConversationRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	turns := make([]mentor.Turn, len(req.ConversationTurns))
	for i, t := range req.ConversationTurns {
		var err error
		if turns[i], err = t.turn(i); err != nil {
			return err
		}
	}
	result, err := h.svc.Update(c.Request().Context(), req.LearnerID.id, turns, req.ForceRegenerate)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, postConversationResponse{
		Success:      true,
		Conversation: result.Conversation,
		Message:      updateMessage(result),
		Summarizer:   h.svc.SummarizerName(),
		TurnsAdded:   result.Added,
		Archived:     result.Archived,
	})
}

func updateMessage(r mentor.UpdateResult) string {
	msg := "No new turns: all were stored already"
	if r.Added > 0 {
		msg = "Stored " + plural(r.Added, "new turn")
	}
	if r.Archived {
		msg += "; the earlier segment was archived"
	}
	switch {
	case !r.Conversation.SummaryStale:
	case mentor.ErrorCode(r.SummaryErr) == mentor.CodeRateLimited:
		// The next update would be refused too: say until when.
		msg += "; the summary could not be updated: " + mentor.ErrorMessage(r.SummaryErr)
	default:
		msg += "; the summary could not be updated and will catch up on the next update"
	}
	return msg
}

func (h *handler) getConversationMemory(c echo.Context) error {
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	// The search's parameters are read, and one a search would refuse is
	// refused, with or without a search: a client's mistake is said, not
	// ignored.
	includeArchive, err := boolParam(c, "include_archive")
	if err != nil {
		return err
	}
	limit, err := limitParam(c, mentor.MaxSearchLimit)
	if err != nil {
		return err
	}
	if c.QueryParams().Has("search") {
		q := mentor.SearchQuery{Text: c.QueryParam("search"), LearnerID: learnerID, IncludeArchive: includeArchive, Limit: limit}
		return h.searchConversationMemory(c, q)
	}
	if _, err := mentor.ValidateSearchLimit(limit); err != nil {
		return err
	}
	conv, err := h.svc.Get(c.Request().Context(), learnerID)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "conversation_update", conv)
}

func (h *handler) searchConversationMemory(c echo.Context, q mentor.SearchQuery) error {
	results, err := h.svc.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"success": true,
		"count":   len(results),
		"query":   q.Text,
		"results": results,
	})
}

// getArchive reads one of the caller's archived conversations, its turns
// a page at a time (limit, offset): a search result that was archived
// opens here, as a current one opens with getConversationMemory.
func (h *handler) getArchive(c echo.Context) error {
	id, err := mentor.ParseArchiveID(c.Param("id"))
	if err != nil {
		return err
	}
	limit, offset, err := pageParams(c, mentor.MaxArchivePage)
	if err != nil {
		return err
	}
	archive, err := h.svc.Archive(c.Request().Context(), mentor.ArchiveQuery{ID: id, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success bool `json:"success"`
		mentor.ArchivedConversation
	}{true, archive})
}

func (h *handler) deleteConversationMemory(c echo.Context) error {
	return callAndAnswer(c, learnerParam, h.svc.Clear, http.StatusOK, "archived")
}
