package apptest

import (
	"net/http"
	"strings"
	"testing"
)

// Scenario is one request to the API and the answer it must get. A table of
// them states the many cases a route refuses or allows, one line each.
type Scenario struct {
	Name   string // the subtest's name; by default the method and the path without its query
	Method string
	Path   string
	Token  string // the caller's access token; none when empty
	Body   any    // as in Request
	Header http.Header

	WantStatus int
	// WantError, when set, is the message of the API's error answer:
	// {"success": false, "error": WantError}.
	WantError string
	// Check, when set, checks more of the answer, or what the request
	// changed.
	Check func(t *testing.T, r Response)
}

// Run sends the request in a subtest and checks the answer.
func (sc Scenario) Run(t *testing.T, s *Service) {
	t.Helper()
	name := sc.Name
	if name == "" {
		path, _, _ := strings.Cut(sc.Path, "?")
		name = sc.Method + " " + path
	}
	t.Run(name, func(t *testing.T) {
		r := Client{URL: s.URL}.Do(t, Request{Method: sc.Method, Path: sc.Path, Token: sc.Token, Body: sc.Body, Header: sc.Header})
		if sc.WantError != "" {
			r.WantError(sc.WantStatus, sc.WantError)
		} else {
			r.WantStatus(sc.WantStatus)
		}
		if sc.Check != nil {
			sc.Check(t, r)
		}
	})
}
