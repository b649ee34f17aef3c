// Package web holds the browser client of Mr. Mentor: plain ES modules,
// CSS and HTML under static/, with no build step, so the same folder is
// embedded into the Go server and published as is by Vercel.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Static returns the client's files, rooted at the static folder, so that
// static/index.html is "index.html".
func Static() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		// Only a renamed folder can cause this, and the build would be broken.
		panic("web: " + err.Error())
	}
	return sub
}
