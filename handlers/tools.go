package handlers

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
	"mentormemory/tools"
)

func (h *handler) listTools(c echo.Context) error {
	return answer(c, http.StatusOK, "tools", tools.Definitions())
}

func (h *handler) callTool(c echo.Context) error {
	var req struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Name == "" {
		return mentor.Errorf(mentor.CodeInvalid, "Tool name required")
	}
	// The model produces arguments as a JSON string; accept the decoded
	// object too, as hand-written clients send it.
	arguments := string(req.Arguments)
	var asString string
	if err := json.Unmarshal(req.Arguments, &asString); err == nil {
		arguments = asString
	}
	result, err := h.tools.Call(c.Request().Context(), req.Name, arguments)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, result)
}
