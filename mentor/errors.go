package mentor

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies an error so the HTTP layer can pick a status without
// knowing where the error came from.
type Code string

const (
	CodeInvalid         Code = "invalid"         // 400
	CodeUnauthenticated Code = "unauthenticated" // 401
	CodeNotFound        Code = "not_found"       // 404
	CodeConflict        Code = "conflict"        // 409: the resource or the caller's settings do not allow it now
	CodeTooLarge        Code = "too_large"       // 413
	CodeRateLimited     Code = "rate_limited"    // 429: a quota is used up
	CodeUnavailable     Code = "unavailable"     // 503
	CodeUpstream        Code = "upstream"        // 502: the model failed
	CodeInternal        Code = "internal"        // 500
)

// ErrBusy is the cause of a 503 that is the service guarding itself, not a
// fault: a limit on work in flight, or a row another request holds. Such
// refusals are expected under load, or under attack, and are logged as
// warnings, so they do not bury the errors that need someone.
var ErrBusy = errors.New("busy")

// Busy is the 503 a refused request gets, with message, for cause.
func Busy(message string, cause error) error {
	return &Error{Code: CodeUnavailable, Message: message, Cause: fmt.Errorf("%w: %w", ErrBusy, cause)}
}

// Error carries a stable code, a message that is safe to show to the caller,
// and an optional cause that is only ever logged.
type Error struct {
	Code    Code
	Message string
	Cause   error
	// RetryAfter, when set, is how long the caller should wait before
	// trying again (the end of a quota's window).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Errorf builds an Error whose message is shown to the caller as is.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected failure; the caller sees only a generic message.
func Internal(cause error) *Error {
	return &Error{Code: CodeInternal, Message: "Internal error", Cause: cause}
}

// ErrorCode returns the code of err, or CodeInternal for errors of any other
// kind.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the caller-safe message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error"
}

// RetryAfter returns how long err asks the caller to wait, or zero.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
