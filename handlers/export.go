package handlers

import (
	"bufio"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// exportAccount answers the caller's archive (of one learner with
// learner_id=<uuid>) as JSON Lines, written as it is read from the
// database: memory holds a buffer and a row, whatever the archive's size.
// The answer is a download; a failure after it started ends it with an
// error line (see mentor.Service.Export).
func (h *handler) exportAccount(c echo.Context) error {
	learnerID, err := learnerParam(c)
	if err != nil {
		return err
	}
	res := c.Response()
	out := bufio.NewWriterSize(&steadyWriter{to: res, rc: http.NewResponseController(res.Writer)}, exportBuffer)
	err = h.svc.Export(c.Request().Context(), learnerID, func(line []byte) error {
		if !res.Committed {
			name := "mentormemory-export.jsonl"
			if learnerID != nil {
				name = fmt.Sprintf("mentormemory-export-%s.jsonl", *learnerID)
			}
			res.Header().Set(echo.HeaderContentType, "application/x-ndjson")
			res.Header().Set(echo.HeaderContentDisposition, fmt.Sprintf("attachment; filename=%q", name))
			res.WriteHeader(http.StatusOK)
		}
		if _, err := out.Write(line); err != nil {
			return err
		}
		return out.WriteByte('\n')
	})
	if flushErr := out.Flush(); err == nil {
		err = flushErr
	}
	return err
}

// exportBuffer is how much of an archive is gathered before it is sent.
const exportBuffer = 64 << 10

// steadyWriter gives every write of a long answer WriteAnswerTimeout
// afresh: the answer as a whole may take minutes, but a client that stops
// reading for that long is cut off, and the export with it.
type steadyWriter struct {
	to *echo.Response
	rc *http.ResponseController
}

func (w *steadyWriter) Write(p []byte) (int, error) {
	// Not every ResponseWriter can (a test's recorder cannot).
	_ = w.rc.SetWriteDeadline(time.Now().Add(WriteAnswerTimeout))
	n, err := w.to.Write(p)
	if err == nil {
		// Sent now, so the client sees the archive come; a client gone
		// shows in the next write.
		_ = w.rc.Flush()
	}
	return n, err
}
