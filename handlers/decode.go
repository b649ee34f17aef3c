package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// decodeJSON reads the request body into dst, turning every way it can be
// wrong into a 400 (or a 413) that says what to fix.
func decodeJSON(c echo.Context, dst any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return mentor.Errorf(mentor.CodeInvalid, "Request body required (JSON)")
	}
	return decodeBody(body, dst)
}

// decodeOptionalJSON is decodeJSON for a body that may be left out: an
// empty body leaves dst as it is.
func decodeOptionalJSON(c echo.Context, dst any) error {
	body, err := readBody(c)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	return decodeBody(body, dst)
}

func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, mentor.Errorf(mentor.CodeTooLarge, "Request body too large (at most %d bytes)", tooLarge.Limit)
		}
		return nil, mentor.Errorf(mentor.CodeInvalid, "Could not read the request body")
	}
	return body, nil
}

func decodeBody(body []byte, dst any) error {
	// encoding/json would quietly replace invalid UTF-8 with U+FFFD.
	if !utf8.Valid(body) {
		return mentor.Errorf(mentor.CodeInvalid, "Request body must be valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return mentor.Errorf(mentor.CodeInvalid, "Malformed JSON: %s has the wrong type", typeErr.Field)
		}
		var fieldErr fieldError
		if errors.As(err, &fieldErr) {
			return mentor.Errorf(mentor.CodeInvalid, "%s", string(fieldErr))
		}
		return mentor.Errorf(mentor.CodeInvalid, "Malformed JSON")
	}
	// Only white space may follow the object. (Decoder.More would miss a
	// stray '}' or ']'.)
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return mentor.Errorf(mentor.CodeInvalid, "Malformed JSON: unexpected data after the object")
	}
	return nil
}

// fieldError is a decoding error whose text is already fit for the client.
type fieldError string

func (e fieldError) Error() string { return string(e) }

// clientTurnID accepts a turn id sent as a string or a number, as chat
// clients use both.
type clientTurnID string

func (id *clientTurnID) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*id = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = clientTurnID(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fieldError("Turn id must be a string or a number")
		}
		*id = clientTurnID(n.String())
	}
	return nil
}

// optionalLearner decodes learner_id: a uuid string, null, or absent.
type optionalLearner struct {
	id *string
}

func (l *optionalLearner) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		l.id = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fieldError("learner_id must be a uuid or null")
	}
	id, err := mentor.ParseLearnerID(s)
	if err != nil {
		return fieldError(mentor.ErrorMessage(err))
	}
	l.id = id
	return nil
}

// learnerParam reads the optional learner_id query parameter.
func learnerParam(c echo.Context) (*string, error) {
	return mentor.ParseLearnerID(c.QueryParam("learner_id"))
}

// boolParam reads an optional true/false query parameter.
func boolParam(c echo.Context, name string) (bool, error) {
	raw := strings.TrimSpace(c.QueryParam(name))
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, mentor.Errorf(mentor.CodeInvalid, "%s must be true or false", name)
	}
	return b, nil
}

// intParam reads an optional whole-number query parameter (0 when absent).
func intParam(c echo.Context, name string) (int, error) {
	raw := strings.TrimSpace(c.QueryParam(name))
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, mentor.Errorf(mentor.CodeInvalid, "%s must be a whole number", name)
	}
	return n, nil
}

// limitParam reads the optional limit of a list (0 when absent, which asks
// for the default). A limit given as 0 is refused rather than taken for
// the default; the service checks the upper bound, max, which the message
// names.
func limitParam(c echo.Context, max int) (int, error) {
	limit, err := intParam(c, "limit")
	if err == nil && limit == 0 && c.QueryParams().Has("limit") {
		err = mentor.Errorf(mentor.CodeInvalid, "limit must be between 1 and %d", max)
	}
	return limit, err
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
