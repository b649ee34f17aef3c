package handlers_test

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/config"
)

// A signed-in request over the limit on requests in flight waits a moment,
// then gets a 503 with Retry-After; the room comes back when the request
// that held it is answered.
func TestRequestsOverTheInFlightLimitAnswer503(t *testing.T) {
	logs := &apptest.Logs{}
	svc := apptest.Start(t, apptest.Options{Web: config.Web{RequestsInFlight: 1, BusyWait: 500 * time.Millisecond}, Logs: logs})
	// Another facilitator's request meets the limit: the first one's own
	// share is a test of its own.
	u, other := svc.NewUser(t), svc.NewUser(t)
	body := `{"name":"Emma"}`
	held := holdRequest(t, svc, u.Token, "/api/learners", body, 5)

	untilBusy(t, func() apptest.Response { return svc.Call(t, other.Token, http.MethodGet, "/api/learners", nil) })
	// The refusal is the service guarding itself, expected under load: a
	// warning, so that a flood of them does not bury the errors.
	logged := logs.WaitFor(t, `"status":503`)
	for _, line := range strings.Split(logged, "\n") {
		if strings.Contains(line, `"status":503`) && !strings.Contains(line, `"level":"WARN"`) {
			t.Errorf("a refusal for lack of room is logged as %s, want a warning", line)
		}
	}

	if status := held.finish(); status != http.StatusCreated {
		t.Fatalf("the request that held the room: status %d, want 201", status)
	}
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
}

// One facilitator holds at most a quarter of the requests in flight: their
// next is refused at once, and another facilitator's is served.
func TestOneFacilitatorHoldsAShareOfTheRequestsInFlight(t *testing.T) {
	logs := &apptest.Logs{}
	svc := apptest.Start(t, apptest.Options{Web: config.Web{RequestsInFlight: 4, BusyWait: 500 * time.Millisecond}, Logs: logs})
	flooder, other := svc.NewUser(t), svc.NewUser(t)
	held := holdRequest(t, svc, flooder.Token, "/api/learners", `{"name":"Emma"}`, 5)

	for range admissionTries {
		r := svc.Call(t, flooder.Token, http.MethodGet, "/api/learners", nil)
		if r.Status == http.StatusOK {
			// The held request may not be admitted yet; or it came while
			// this request was in flight and was refused itself, as it
			// should be (its 503 comes once its unsent body has been
			// waited for): then another is held.
			if held.answered() {
				held = holdRequest(t, svc, flooder.Token, "/api/learners", `{"name":"Emma"}`, 5)
			}
			time.Sleep(admissionPause)
			continue
		}
		r.WantError(http.StatusServiceUnavailable, "Too many of your requests in progress, please retry")
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("a 503 without Retry-After")
		}
		svc.Call(t, other.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
		if status := held.finish(); status != http.StatusCreated {
			t.Fatalf("the request that held the share: status %d, want 201", status)
		}
		svc.Call(t, flooder.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)
		return
	}
	t.Fatalf("the facilitator's second request in flight was never refused; the app's log:\n%s", logs.String())
}

// Bodies in flight are bounded by the bytes they announce: while one
// request holds the whole allowance, another body waits, then gets a 503,
// and requests without a body are still served.
func TestBodiesOverTheInFlightLimitAnswer503(t *testing.T) {
	svc := apptest.Start(t, apptest.Options{Web: config.Web{BodyBytesInFlight: 2 << 20, BusyWait: 500 * time.Millisecond}})
	u, other := svc.NewUser(t), svc.NewUser(t)
	// The largest body allowed: a learner, then white space up to 2 MiB.
	body := `{"name":"Max"}`
	body += strings.Repeat(" ", 2<<20-len(body))
	held := holdRequest(t, svc, u.Token, "/api/learners", body, 1000)

	untilBusy(t, func() apptest.Response {
		return svc.Call(t, other.Token, http.MethodPost, "/api/learners", map[string]any{"name": "Emma"})
	})
	svc.Call(t, u.Token, http.MethodGet, "/api/learners", nil).WantStatus(http.StatusOK)

	if status := held.finish(); status != http.StatusCreated {
		t.Fatalf("the request that held the allowance: status %d, want 201", status)
	}
	svc.Call(t, u.Token, http.MethodPost, "/api/learners", map[string]any{"name": "Emma"}).WantStatus(http.StatusCreated)
}

// A held request is admitted within milliseconds on a quiet machine, and
// took over five seconds on a machine running three test suites at once:
// the tests wait for it at least admissionTries × admissionPause (20 s),
// sending fewer requests than the facilitators' quotas allow (100 learners
// a day, 300 reads a minute), and the flood's test prints the app's log if
// it never comes.
const (
	admissionTries = 80
	admissionPause = 250 * time.Millisecond
)

// untilBusy sends requests until one is refused for lack of room, which
// must come as the API's 503 with Retry-After; until then each is served.
// The request holding the room may not be admitted yet when the first ones
// arrive.
func untilBusy(t *testing.T, send func() apptest.Response) {
	t.Helper()
	for range admissionTries {
		r := send()
		if r.Status != http.StatusServiceUnavailable {
			if r.Status >= 300 {
				t.Fatalf("answer %s, want a 2xx before the limit is reached and a 503 after", r)
			}
			time.Sleep(admissionPause)
			continue
		}
		r.WantError(http.StatusServiceUnavailable, "Too many requests in progress, please retry")
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("a 503 without Retry-After")
		}
		return
	}
	t.Fatal("no request was refused while the limit was held")
}

// heldRequest is a request whose body is sent in part, so the server
// holds it in flight, reading, until finish sends the rest.
type heldRequest struct {
	conn   net.Conn
	answer *bufio.Reader
	rest   string
}

// holdRequest posts body to path with token, sending only its first sent
// bytes.
func holdRequest(t *testing.T, svc *apptest.Service, token, path, body string, sent int) *heldRequest {
	t.Helper()
	conn := dialService(t, svc)
	head := "POST " + path + " HTTP/1.1\r\nHost: " + conn.RemoteAddr().String() + "\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write([]byte(head + body[:sent])); err != nil {
		t.Fatal(err)
	}
	return &heldRequest{conn: conn, answer: bufio.NewReader(conn), rest: body[sent:]}
}

// answered says whether the server has answered the held request already,
// before its body was finished: it was refused.
func (h *heldRequest) answered() bool {
	_ = h.conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	defer h.conn.SetReadDeadline(time.Time{})
	_, err := h.answer.Peek(1)
	return err == nil
}

// dialService opens a connection to the service, closed when the test
// ends, for requests a client would not send.
func dialService(t *testing.T, svc *apptest.Service) net.Conn {
	t.Helper()
	u, err := url.Parse(svc.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// finish sends the rest of the body and returns the answer's status.
func (h *heldRequest) finish() int {
	if _, err := h.conn.Write([]byte(h.rest)); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(h.answer, nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
