package apptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"mentormemory/handlers"
)

// The contract check: every request a test sends through Client.Do (and
// so Service.Call and Scenario.Run) and every answer it gets are validated
// against the API's OpenAPI document, handlers/openapi.json. A field,
// status or route the document does not name fails the test, so the
// document cannot drift from the code.

// Contract is the API's OpenAPI document, loaded and validated once.
func Contract(tb testing.TB) *openapi3.T {
	tb.Helper()
	c := loadContract()
	if c.err != nil {
		tb.Fatalf("handlers/openapi.json: %v", c.err)
	}
	return c.doc
}

type contract struct {
	doc    *openapi3.T
	router routers.Router
	err    error
}

var loadContract = sync.OnceValue(func() contract {
	// The two answers that are not JSON: the profile as Markdown and the
	// export as JSON Lines. Each is checked as text; the export's lines
	// are the export tests' business.
	openapi3filter.RegisterBodyDecoder("text/markdown", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
	// A streamed reply is checked event by event (EventStream).
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(handlers.OpenAPIDocument())
	if err != nil {
		return contract{err: err}
	}
	if err := doc.Validate(loader.Context); err != nil {
		return contract{err: err}
	}
	router, err := legacy.NewRouter(doc)
	return contract{doc: doc, router: router, err: err}
})

// described says whether the document covers path: the API and the health
// check, not the web client's files.
func described(path string) bool {
	return strings.HasPrefix(path, "/api/") || path == "/healthz" || path == "/metrics"
}

// checkContract validates a request, sent with body, and its answer r.
//
// The answer is always validated. The request is validated unless it was
// refused with a 4xx: tests send malformed JSON, wrong types and bad
// parameters on purpose, and the server's refusal is what they check. A
// request the server accepted must be one the document allows, or a client
// built from the document could not send it.
func checkContract(req *http.Request, body []byte, r Response) error {
	c := loadContract()
	if c.err != nil {
		return fmt.Errorf("handlers/openapi.json: %w", c.err)
	}
	if !described(req.URL.Path) || req.Method == http.MethodOptions || r.Status == http.StatusRequestHeaderFieldsTooLarge {
		// OPTIONS is a browser's CORS preflight, answered before any
		// route; a 431 is net/http's own plain-text refusal, also before
		// any route (the document's description says so).
		return nil
	}
	route, pathParams, err := c.router.FindRoute(req)
	if err != nil {
		var routeErr *routers.RouteError
		if errors.As(err, &routeErr) && (r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed) {
			// A path or method the API does not have: its answer is the
			// API's error, as for any other.
			return validateError(c.doc, r)
		}
		return fmt.Errorf("%s %s is not in the document: %w", req.Method, req.URL.Path, err)
	}

	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc:    bearerSent,
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   req.Method == http.MethodHead,
		},
	}
	var failures []error
	if r.Status < 400 || r.Status >= 500 {
		req.Body = io.NopCloser(bytes.NewReader(body))
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			failures = append(failures, fmt.Errorf("the request: %w", err))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.Status, Header: r.Header, Options: in.Options}
	out.SetBodyBytes(r.Raw)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		failures = append(failures, fmt.Errorf("the answer %d: %w", r.Status, err))
	}
	return errors.Join(failures...)
}

// validateError checks that r is the API's error answer.
func validateError(doc *openapi3.T, r Response) error {
	if len(r.Raw) == 0 {
		return nil // HEAD
	}
	var value any = r.Body
	if err := doc.Components.Schemas["Error"].Value.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("the answer %d is not the API's error: %w", r.Status, err)
	}
	return nil
}

// bearerSent stands in for the security schemes: the server checks the
// token itself; the document only says that one is sent.
func bearerSent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return errors.New("no bearer token")
	}
	return nil
}
