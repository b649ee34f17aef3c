package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// The events of a streamed reply (Server-Sent Events), in order: "text"
// for each piece of the reply as the model writes it, "tool" when the
// model runs a tool (its name only), and last either "reply" (the whole
// reply with its metadata, as the JSON answer has it) or "error" (what
// the JSON answer's error would have said, with its status).
const (
	eventText  = "text"
	eventTool  = "tool"
	eventReply = "reply"
	eventError = "error"
)

// wantsEventStream is whether the client asked for the reply as a stream.
func wantsEventStream(r *http.Request) bool {
	for _, accepted := range strings.Split(r.Header.Get(echo.HeaderAccept), ",") {
		if media, _, err := mime.ParseMediaType(strings.TrimSpace(accepted)); err == nil && media == "text/event-stream" {
			return true
		}
	}
	return false
}

// streamReply answers chat as Server-Sent Events. Everything that can be
// refused was checked before it starts, so the status is 200; a failure
// after it (the model failing, memory the learner does not own) is the
// stream's last event. A client that goes away cancels the request's
// context, and with it the model's call.
func (h *handler) streamReply(c echo.Context, chat mentor.ChatRequest) error {
	defer h.metrics.StreamOpened()()
	res := c.Response()
	header := res.Header()
	header.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	// Neither a browser, a CDN nor a proxy may keep it or hold it back:
	// X-Accel-Buffering turns off nginx's buffering, no-transform keeps a
	// proxy from compressing (and so buffering) it.
	header.Set(echo.HeaderCacheControl, "no-cache, no-transform")
	header.Set("X-Accel-Buffering", "no")
	res.WriteHeader(http.StatusOK)
	events := &eventWriter{to: &steadyWriter{to: res, rc: http.NewResponseController(res.Writer)},
		started: time.Now(), firstText: h.metrics.ObserveFirstText}
	// The headers go now, so the client knows the reply is coming before
	// the first word of it.
	_ = events.to.rc.Flush()

	ctx := c.Request().Context()
	reply, err := h.counselor.Chat(ctx, chat, events)
	switch {
	case err != nil && ctx.Err() != nil:
		// The client left: nobody to tell. The log says why it ended.
		return fmt.Errorf("the client went away while the reply was written: %w", context.Cause(ctx))
	case err != nil:
		status, message := describe(err)
		events.send(eventError, map[string]any{"success": false, "error": message, "status": status})
		return err
	}
	events.send(eventReply, chatAnswer{true, reply})
	return events.err
}

// eventWriter writes Server-Sent Events, each sent as soon as it is
// written. It is the chat's listener.
type eventWriter struct {
	to *steadyWriter
	// err is the first write that failed: the client is gone, and the
	// request's context ends with it.
	err error
	// firstText hears how long after started the first text was sent.
	started   time.Time
	firstText func(time.Duration)
	sentText  bool
}

func (w *eventWriter) send(event string, data any) {
	if w.err != nil {
		return
	}
	encoded, err := json.Marshal(data)
	if err != nil {
		w.err = err
		return
	}
	// JSON has no raw newline, so the data is one line.
	_, w.err = fmt.Fprintf(w.to, "event: %s\ndata: %s\n\n", event, encoded)
}

func (w *eventWriter) ReplyText(piece string) {
	w.send(eventText, map[string]string{"text": piece})
	if !w.sentText {
		w.sentText = true
		w.firstText(time.Since(w.started))
	}
}

func (w *eventWriter) ToolRuns(name string) { w.send(eventTool, map[string]string{"name": name}) }
