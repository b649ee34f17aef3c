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

// decodeJSON decodes the request body into dst as it arrives, turning
// every way it can be wrong into a 400 (or a 413) that says what to fix.
func decodeJSON(c echo.Context, dst any) error {
	err := decodeBody(c.Request().Body, dst)
	if err == errEmptyBody {
		return mentor.Errorf(mentor.CodeInvalid, "Request body required (JSON)")
	}
	return err
}

// decodeOptionalJSON is decodeJSON for a body that may be left out: an
// empty body leaves dst as it is.
func decodeOptionalJSON(c echo.Context, dst any) error {
	err := decodeBody(c.Request().Body, dst)
	if err == errEmptyBody {
		return nil
	}
	return err
}

// errEmptyBody is decodeBody's answer to a body of white space alone.
var errEmptyBody = errors.New("empty body")

// decodeBody decodes the one JSON value of body into dst while reading it,
// instead of reading the whole body first and decoding a copy: a body near
// the size limit then costs one buffer, the decoder's, not two. The rest of
// the body is read (and dropped) even after the value failed to decode, so
// that a body is judged as a whole, in this order: too large, unreadable,
// not UTF-8, malformed JSON, data after the value.
func decodeBody(body io.Reader, dst any) error {
	src := &checkedBody{r: body}
	dec := json.NewDecoder(src)
	decodeErr := dec.Decode(dst)
	var rest afterValue
	_, _ = io.Copy(&rest, io.MultiReader(dec.Buffered(), src))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(src.err, &tooLarge):
		return mentor.Errorf(mentor.CodeTooLarge, "Request body too large (at most %d bytes)", tooLarge.Limit)
	case src.err != nil:
		return mentor.Errorf(mentor.CodeInvalid, "Could not read the request body")
	case !src.text.valid():
		// encoding/json would quietly replace invalid UTF-8 with U+FFFD.
		return mentor.Errorf(mentor.CodeInvalid, "Request body must be valid UTF-8")
	case decodeErr == io.EOF:
		return errEmptyBody
	case decodeErr != nil:
		return jsonError(decodeErr)
	case rest.data:
		return mentor.Errorf(mentor.CodeInvalid, "Malformed JSON: unexpected data after the object")
	case src.first != '{':
		return mentor.Errorf(mentor.CodeInvalid, "Malformed JSON: the body must be an object")
	}
	return nil
}

// jsonError tells the client what is wrong with a body that failed to
// decode.
func jsonError(err error) error {
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

// checkedBody reads a body, checking that it is UTF-8 and keeping the
// first error other than its end, so that the body's own failures (too
// large, cut off) are told apart from the JSON's.
type checkedBody struct {
	r    io.Reader
	text utf8Stream
	err  error
	// first is the body's first byte that is not JSON white space (0
	// before it arrives): every body of the API is an object, and a null
	// would decode into one as if it were {}.
	first byte
}

func (b *checkedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.first == 0 {
		if rest := bytes.TrimLeft(p[:n], " \t\r\n"); len(rest) > 0 {
			b.first = rest[0]
		}
	}
	b.text.write(p[:n])
	if err == io.EOF {
		b.text.end()
	} else if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

// afterValue notes whether anything but JSON white space follows the
// value. (Decoder.More would miss a stray '}' or ']'.)
type afterValue struct{ data bool }

func (a *afterValue) Write(p []byte) (int, error) {
	if !a.data {
		a.data = len(bytes.TrimLeft(p, " \t\r\n")) > 0
	}
	return len(p), nil
}

// utf8Stream checks that text which arrives in pieces is valid UTF-8; a
// character may be cut between two pieces.
type utf8Stream struct {
	cut     []byte // the start of a character the last piece ended in
	invalid bool
}

func (u *utf8Stream) write(p []byte) {
	// First finish the character the last piece cut, a byte at a time.
	for len(u.cut) > 0 && len(p) > 0 && !u.invalid {
		u.cut = append(u.cut, p[0])
		p = p[1:]
		if utf8.FullRune(u.cut) {
			u.invalid = !utf8.Valid(u.cut)
			u.cut = u.cut[:0]
		}
	}
	if u.invalid || len(p) == 0 {
		return
	}
	// Keep back a character this piece cuts: its first byte is one of the
	// last three.
	whole := len(p)
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				whole = i
			}
			break
		}
	}
	u.invalid = !utf8.Valid(p[:whole])
	u.cut = append(u.cut, p[whole:]...)
}

// end marks the end of the text: a character cut there is invalid.
func (u *utf8Stream) end() {
	u.invalid = u.invalid || len(u.cut) > 0
}

func (u *utf8Stream) valid() bool { return !u.invalid }

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

// learnerIDParam reads the learner id of the path.
func learnerIDParam(c echo.Context) (string, error) {
	learnerID, err := mentor.ParseLearnerID(c.Param("id"))
	if err != nil || learnerID == nil {
		return "", mentor.Errorf(mentor.CodeInvalid, "learner id must be a uuid")
	}
	return *learnerID, nil
}

// memoryIDParam reads the memory id of the path.
func memoryIDParam(c echo.Context) (string, error) {
	return mentor.ParseMemoryID(c.Param("id"))
}

// actionIDParam reads the action id of the path.
func actionIDParam(c echo.Context) (string, error) {
	return mentor.ParseActionID(c.Param("id"))
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
// the default; the service checks the bounds, 1 to max, which the message
// names.
func limitParam(c echo.Context, max int) (int, error) {
	limit, err := intParam(c, "limit")
	if err == nil && limit == 0 && c.QueryParams().Has("limit") {
		err = mentor.Errorf(mentor.CodeInvalid, "limit must be between 1 and %d", max)
	}
	return limit, err
}

// pageParams reads where a page of a long list starts (offset, 0 when
// absent) and how long it is (limit, as limitParam reads it).
func pageParams(c echo.Context, max int) (limit, offset int, err error) {
	if limit, err = limitParam(c, max); err != nil {
		return 0, 0, err
	}
	offset, err = intParam(c, "offset")
	return limit, offset, err
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
