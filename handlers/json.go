package handlers

import (
	"encoding/json"
	"strconv"

	"github.com/labstack/echo/v4"
)

// wholeJSON writes each JSON answer in one piece, with its length. Echo's
// default serializer streams its encoder into the response, so an answer
// longer than net/http's 2 KB buffer went out chunked, in several writes: a
// conversation with its recent turns is 4 to 6 KB, a search 40 to 60 KB.
// Each extra write is a system call that a busy 2-core server pays for on
// nearly every answer.
type wholeJSON struct{ echo.DefaultJSONSerializer }

func (wholeJSON) Serialize(c echo.Context, i any, indent string) error {
	var body []byte
	var err error
	if indent == "" {
		body, err = json.Marshal(i)
	} else {
		body, err = json.MarshalIndent(i, "", indent)
	}
	if err != nil {
		return err
	}
	// A newline ends the body, as json.Encoder ends it.
	body = append(body, '\n')
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	_, err = c.Response().Write(body)
	return err
}
