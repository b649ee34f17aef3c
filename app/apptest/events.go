package apptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// Event is one Server-Sent Event of a streamed answer.
type Event struct {
	Name string
	Data map[string]any
	Raw  string // the data as sent
}

// EventStream is a streamed answer, read event by event as it comes. Each
// event's data is checked against the API's document (see eventSchema).
type EventStream struct {
	Status int
	Header http.Header
	// Refusal is the answer's JSON when the request was refused before
	// any event (Status is not 200).
	Refusal Response

	tb     testing.TB
	path   string
	body   io.ReadCloser
	reader *bufio.Reader
}

// Stream posts body to path asking for Server-Sent Events, and returns the
// answer once its headers arrive.
func (s *Service) Stream(tb testing.TB, token, path string, body any) *EventStream {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(requestBody(tb, body)))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("POST %s: %v", path, err)
	}
	e := &EventStream{Status: resp.StatusCode, Header: resp.Header, tb: tb, path: path, body: resp.Body, reader: bufio.NewReader(resp.Body)}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		e.Refusal = Response{Status: resp.StatusCode, Header: resp.Header, tb: tb}
		e.Refusal.Raw, _ = io.ReadAll(resp.Body)
		if err := json.Unmarshal(e.Refusal.Raw, &e.Refusal.Body); err != nil {
			tb.Fatalf("a refused stream's answer is not JSON: %s", e.Refusal.Raw)
		}
		if err := validateError(Contract(tb), e.Refusal); err != nil {
			tb.Error(err)
		}
	}
	return e
}

// Next reads the next event; io.EOF when the stream has ended.
func (e *EventStream) Next() (Event, error) {
	var ev Event
	for {
		line, err := e.reader.ReadString('\n')
		if err != nil {
			if err == io.EOF && (ev.Name != "" || line != "") {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && ev.Name != "":
			if err := json.Unmarshal([]byte(ev.Raw), &ev.Data); err != nil {
				return ev, fmt.Errorf("event %s's data is not a JSON object: %s", ev.Name, ev.Raw)
			}
			// Benchmarks time the server; the tests hold it to the document.
			if _, benchmark := e.tb.(*testing.B); !benchmark {
				if err := e.check(ev); err != nil {
					e.tb.Errorf("event %s of POST %s breaks the API's document: %v", ev.Name, e.path, err)
				}
			}
			return ev, nil
		case strings.HasPrefix(line, "event: "):
			ev.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if ev.Raw != "" {
				return ev, fmt.Errorf("event %s has more than one data line", ev.Name)
			}
			ev.Raw = strings.TrimPrefix(line, "data: ")
		case line == "":
		default:
			return ev, fmt.Errorf("a line that is no event's: %q", line)
		}
	}
}

// All reads the events to the stream's end; the test fails if it breaks
// off.
func (e *EventStream) All() []Event {
	e.tb.Helper()
	defer e.Close()
	var events []Event
	for {
		ev, err := e.Next()
		if err == io.EOF {
			return events
		}
		if err != nil {
			e.tb.Fatalf("after %d events: %v", len(events), err)
		}
		events = append(events, ev)
	}
}

// Close hangs up, as a client that stops reading does.
func (e *EventStream) Close() { e.body.Close() }

// check validates ev's data against its schema in the document.
func (e *EventStream) check(ev Event) error {
	schema, err := eventSchema(Contract(e.tb), e.path, ev.Name)
	if err != nil {
		return err
	}
	var value any = ev.Data
	return schema.VisitJSON(value, openapi3.EnableJSONSchema2020())
}

// eventSchema is the schema of the data of the event called name, on the
// route at path: the reply event is the route's JSON answer, the others
// the document's Chat…Event schemas.
func eventSchema(doc *openapi3.T, path, name string) (*openapi3.Schema, error) {
	if name == "reply" {
		route := doc.Paths.Value(path)
		if route == nil || route.Post == nil {
			return nil, fmt.Errorf("POST %s is not in the document", path)
		}
		return route.Post.Responses.Value("200").Value.Content.Get("application/json").Schema.Value, nil
	}
	component := map[string]string{"text": "ChatTextEvent", "tool": "ChatToolEvent", "error": "ChatErrorEvent"}[name]
	ref := doc.Components.Schemas[component]
	if ref == nil {
		return nil, fmt.Errorf("the document names no event %q", name)
	}
	return ref.Value, nil
}
