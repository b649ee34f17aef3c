package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// FuzzDecodeConversationRequest posts any body to a route that only
// decodes a conversation update, behind the real body limit and error
// handler, so no database is needed. A body is either refused with a 400 or
// a 413 that says why, or decoded to exactly what it says. With limit 0 the
// real limit applies; a smaller one lets short inputs reach the 413, with
// chunked bodies (no Content-Length) as well as announced ones.
func FuzzDecodeConversationRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, limit uint16, chunked bool) {
		max := int64(MaxBodyBytes)
		if limit > 0 {
			max = int64(limit)
		}
		var req postConversationRequest
		var handlerErr error
		e := echo.New()
		e.HTTPErrorHandler = renderError
		e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				handlerErr = next(c)
				return handlerErr
			}
		}, bodyLimit(max, nil))
		e.POST("/", func(c echo.Context) error { return decodeJSON(c, &req) })
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		if chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)

		tooLarge := int64(len(body)) > max
		if handlerErr != nil {
			requireRefusal(t, handlerErr, w, tooLarge)
			return
		}
		if tooLarge || w.Code != http.StatusOK {
			t.Fatalf("%d-byte body over a %d-byte limit answered %d", len(body), max, w.Code)
		}
		requireDecoded(t, body, req)
	})
}

// requireRefusal checks a refused body: a *mentor.Error coded invalid, or
// too_large exactly when the body is over the limit, rendered with its
// status and its message.
func requireRefusal(t *testing.T, err error, w *httptest.ResponseRecorder, tooLarge bool) {
	t.Helper()
	e, ok := err.(*mentor.Error)
	if !ok {
		t.Fatalf("want a *mentor.Error, got %T %v", err, err)
	}
	want, status := mentor.CodeInvalid, http.StatusBadRequest
	if tooLarge {
		want, status = mentor.CodeTooLarge, http.StatusRequestEntityTooLarge
	}
	if e.Code != want || w.Code != status {
		t.Fatalf("%v answered %d; want code %s, status %d", err, w.Code, want, status)
	}
	if e.Message == "" || !utf8.ValidString(e.Message) || len(e.Message) > 200 {
		t.Fatalf("message %q: want a short one", e.Message)
	}
	var rendered errorBody
	if json.Unmarshal(w.Body.Bytes(), &rendered) != nil || rendered.Success || rendered.Error != e.Message {
		t.Fatalf("rendered %s for %v", w.Body.Bytes(), err)
	}
}

// plainRequest is a conversation update decoded by encoding/json alone,
// the id and learner_id kept as sent.
type plainRequest struct {
	LearnerID         json.RawMessage `json:"learner_id"`
	ConversationTurns []struct {
		ID      json.RawMessage `json:"id"`
		Role    string          `json:"role"`
		Content string          `json:"content"`
	} `json:"conversation_turns"`
	ForceRegenerate bool `json:"force_regenerate"`
}

// requireDecoded checks an accepted body: one JSON value and nothing after
// it, decoded to what plain encoding/json reads, with the learner id in
// canonical form and each turn id as the string or number sent.
func requireDecoded(t *testing.T, body []byte, req postConversationRequest) {
	t.Helper()
	var plain plainRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&plain); err != nil {
		t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
	}
	if rest := bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		t.Fatalf("accepted %q with %q after the object", body, rest)
	}

	switch raw := string(plain.LearnerID); {
	case raw == "" || raw == "null":
		if req.LearnerID.id != nil {
			t.Fatalf("learner_id %q decoded to %q", raw, *req.LearnerID.id)
		}
	default:
		var sent string
		if err := json.Unmarshal(plain.LearnerID, &sent); err != nil {
			t.Fatalf("accepted learner_id %s", raw)
		}
		want, err := mentor.ParseLearnerID(sent)
		if err != nil {
			t.Fatalf("accepted learner_id %q: %v", sent, err)
		}
		got := req.LearnerID.id
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Fatalf("learner_id %q decoded to %v, want %v", sent, got, want)
		}
		if got != nil {
			if id, err := uuid.Parse(*got); err != nil || id.String() != *got {
				t.Fatalf("learner_id %q is not in canonical form", *got)
			}
		}
	}

	if req.ForceRegenerate != plain.ForceRegenerate || len(req.ConversationTurns) != len(plain.ConversationTurns) {
		t.Fatalf("decoded %+v, encoding/json reads %+v", req, plain)
	}
	for i, turn := range req.ConversationTurns {
		sent := plain.ConversationTurns[i]
		wantID := string(sent.ID)
		switch {
		case wantID == "null":
			wantID = ""
		case strings.HasPrefix(wantID, `"`):
			if err := json.Unmarshal(sent.ID, &wantID); err != nil {
				t.Fatal(err)
			}
		case wantID != "" && !strings.ContainsAny(wantID[:1], "-0123456789"):
			t.Fatalf("turn %d: accepted id %s, neither a string nor a number", i+1, sent.ID)
		}
		if turn.Role != sent.Role || turn.Content != sent.Content || string(turn.ID) != wantID {
			t.Fatalf("turn %d decoded to %+v; sent id %s, role %q, content %q", i+1, turn, sent.ID, sent.Role, sent.Content)
		}
	}
}
