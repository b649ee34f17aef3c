package handlers

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"mentormemory/mentor"
)

// MaxImportBytes bounds an archive's body (POST /api/import): 100,000
// turns export to about 55 MB. The body is read a line at a time as it is
// stored, so memory holds a line, not the body; admission counts it as one
// body of the ordinary size.
const MaxImportBytes = 256 << 20

// ImportReadTimeout is how long an import's body may take to arrive and be
// stored, as long as the store's transaction for it.
const ImportReadTimeout = 5 * time.Minute

// importArchive stores an archive (as GET /api/export writes it) in the
// caller's account, all of it or, with a 400 naming the bad line, nothing,
// and answers per type how many records were imported and how many were
// there already.
func (h *handler) importArchive(c echo.Context) error {
	// The body is read as the records are stored, for minutes when large:
	// longer than the server's read timeout allows a request.
	_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(time.Now().Add(ImportReadTimeout))
	counts, err := h.svc.Import(c.Request().Context(), bodyTooLarge{c.Request().Body})
	if err != nil {
		return err
	}
	return answer(c, http.StatusOK, "records", counts)
}

// bodyTooLarge makes a body past its limit a 413.
type bodyTooLarge struct{ io.Reader }

func (b bodyTooLarge) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		err = mentor.Errorf(mentor.CodeTooLarge, "Request body too large (at most %d bytes)", tooLarge.Limit)
	}
	return n, err
}
