package handlers

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the API's contract: every route, its parameters, bodies
// and answers. The handler tests validate what they send and receive
// against it (app/apptest), so it cannot drift from the code.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the OpenAPI 3.1 document of the API, as GET
// /api/openapi.json serves it. The caller must not change it.
func OpenAPIDocument() []byte { return openAPIDocument }

// serveOpenAPI answers the document; it is public, as a client generator
// fetches it before anyone signs in.
func serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
