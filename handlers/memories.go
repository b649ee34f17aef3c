package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

type addMemoryRequest struct {
	LearnerID  optionalLearner   `json:"learner_id"`
	Type       mentor.MemoryType `json:"type"`
	Content    string            `json:"content"`
	Importance *float64          `json:"importance"`
	Confidence *float64          `json:"confidence"`
	Metadata   mentor.Metadata   `json:"metadata"`
}

func (h *handler) addMemory(c echo.Context) error {
	var req addMemoryRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	m := mentor.NewMemory{
		LearnerID:  req.LearnerID.id,
		Type:       req.Type,
		Content:    req.Content,
		Importance: valueOr(req.Importance, mentor.DefaultImportance),
		Confidence: valueOr(req.Confidence, mentor.DefaultAddedConfidence),
		Metadata:   req.Metadata,
	}
	saved, err := h.svc.AddMemory(c.Request().Context(), m)
	if err != nil {
		return err
	}
	status, message := http.StatusCreated, "Memory stored"
	switch {
	case saved.Merged:
		status, message = http.StatusOK, "Already known: the existing memory was reinforced"
	case saved.Superseded != nil:
		message = "Memory stored; it replaces the memory it contradicts, which is kept in the history"
	}
	return c.JSON(status, map[string]any{"success": true, "memory": saved.Memory, "merged": saved.Merged,
		"superseded": saved.Superseded, "message": message})
}

func (h *handler) correctMemory(c echo.Context) error {
	id, err := memoryIDParam(c)
	if err != nil {
		return err
	}
	var patch mentor.MemoryPatch
	if err := decodeJSON(c, &patch); err != nil {
		return err
	}
	updated, err := h.svc.CorrectMemory(c.Request().Context(), id, patch)
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "memory", updated)
}

func (h *handler) forgetMemory(c echo.Context) error {
	id, err := memoryIDParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.ForgetMemory(c.Request().Context(), id); err != nil {
		return err
	}
	return answer(c, http.StatusOK, "deleted", id)
}

// memoryHistory lists every change of a memory, oldest first, with who
// made it; a forgotten memory's history keeps no word of it.
func (h *handler) memoryHistory(c echo.Context) error {
	id, err := memoryIDParam(c)
	if err != nil {
		return err
	}
	changes, err := h.svc.MemoryHistory(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"success": true, "memory_id": id, "history": changes})
}

// listMemories lists one learner's memories (learner_id=<uuid>), the
// general ones (learner_id=null), or, without learner_id, all of them.
func (h *handler) listMemories(c echo.Context) error {
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	limit, offset, err := pageParams(c, mentor.MaxMemoryList)
	if err != nil {
		return err
	}
	q := mentor.ListQuery{
		LearnerID: learnerID,
		All:       !c.QueryParams().Has("learner_id"),
		Filter:    filterParams(c),
		Limit:     limit,
		Offset:    offset,
	}
	memories, err := h.svc.ListMemories(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return answerList(c, "memories", memories)
}

// memoryContext recalls what matters for the next reply to message.
func (h *handler) memoryContext(c echo.Context) error {
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	recall, err := h.svc.RecallContext(c.Request().Context(), learnerID, c.QueryParam("message"), filterParams(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success bool `json:"success"`
		mentor.Recall
	}{true, recall})
}

func filterParams(c echo.Context) mentor.MemoryFilter {
	return mentor.MemoryFilter{
		Type:     mentor.MemoryType(c.QueryParam("type")),
		Emotion:  c.QueryParam("emotion"),
		Valence:  c.QueryParam("valence"),
		Category: c.QueryParam("category"),
		Topic:    c.QueryParam("topic"),
	}
}

func valueOr(v *float64, def float64) float64 {
	if v == nil {
		return def
	}
	return *v
}
