package llm

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/openai/openai-go/v3"

	"mentormemory/mentor"
)

// Kind is how a model call failed, in a fixed phrase of the service's
// own. Adapters declare their failures as Kinds and may wrap them with
// detail; Failure reports the Kind and leaves the detail out.
type Kind string

func (k Kind) Error() string { return string(k) }

// Failure classifies a failure as the model's, so the HTTP layer answers
// 502 with message. The cause stays available to errors.Is and errors.As,
// but what it says, in the logs and in memory_jobs.last_error, is only how
// the model failed (see describe): a model's error body or refusal may
// quote the turns it was given, and those are memory text.
//
// A refusal of the model budget is no failure of the model's: it keeps its
// own code, message and Retry-After.
func Failure(message string, cause error) error {
	switch mentor.ErrorCode(cause) {
	case mentor.CodeRateLimited, mentor.CodeTooLarge:
		return cause
	}
	return &mentor.Error{Code: mentor.CodeUpstream, Message: message, Cause: described{cause}}
}

// described is a cause whose text is its description.
type described struct{ cause error }

func (d described) Error() string { return describe(d.cause) }
func (d described) Unwrap() error { return d.cause }

// describe says how a model call failed without a word of what was asked or
// answered: the API's HTTP status with its error type and code, "timeout",
// "canceled", the failure's Kind, or else only that the call failed.
func describe(err error) string {
	var apiErr *openai.Error
	var kind Kind
	switch {
	case errors.As(err, &apiErr):
		return apiFailure(apiErr)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &kind):
		return string(kind)
	default:
		return "model call failed"
	}
}

// identifier is what an API's error type or code looks like
// ("invalid_request_error", "rate_limit_exceeded"). An OpenAI-compatible
// server may put any text there, the request's included, so a value of
// another shape is left out.
var identifier = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func apiFailure(e *openai.Error) string {
	s := fmt.Sprintf("model API status %d", e.StatusCode)
	if identifier.MatchString(e.Type) {
		s += " type " + e.Type
	}
	if identifier.MatchString(e.Code) {
		s += " code " + e.Code
	}
	return s
}
