package handlers

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// An answer to a client that does not read it is given up once its write
// deadline passes, so the memory it holds is freed; without one the write
// waits as long as the server lets it.
func TestAnAnswerNobodyReadsIsGivenUp(t *testing.T) {
	written := make(chan error, 1)
	e := echo.New()
	e.Use(writeDeadline(100 * time.Millisecond))
	e.GET("/", func(c echo.Context) error {
		c.Response().WriteHeader(http.StatusOK)
		// Far more than the sockets between the two can hold.
		_, err := c.Response().Write(make([]byte, 64<<20))
		written <- err
		return nil
	})
	srv := httptest.NewServer(e)
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: test\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The bound only keeps a broken deadline from hanging the test.
	select {
	case err := <-written:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("writing to a client that does not read: %v, want the write deadline exceeded", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the answer to a client that does not read was never given up")
	}
}
