// Package tokens counts text as OpenAI's models do, with the cl100k_base
// byte-pair encoding. The encoding's data ships inside a Go module
// (tiktoken-go-loader), so nothing is downloaded at run time.
package tokens

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the byte-pair encoding counted with.
const Encoding = "cl100k_base"

var (
	load     sync.Once
	encoding *tiktoken.Tiktoken
	loadErr  error
)

// Count is the number of tokens in text. The encoding is read once, on the
// first count; it is part of the binary, so reading it cannot fail but by a
// bug, which panics.
func Count(text string) int {
	load.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		encoding, loadErr = tiktoken.GetEncoding(Encoding)
	})
	if loadErr != nil {
		panic("the " + Encoding + " encoding, built into the binary, does not load: " + loadErr.Error())
	}
	return len(encoding.Encode(text, nil, nil))
}
