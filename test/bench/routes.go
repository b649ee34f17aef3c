package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"mentormemory/mentor"
	"mentormemory/test/textgen"

	"github.com/google/uuid"
)

// RouteKeys are the routes -routes can choose, in the order they are
// measured.
var RouteKeys = []string{"get", "get-learner", "search", "post", "post-archive", "recall-light", "recall-deep", "opening"}

// route is one kind of request. request builds it from the worker's random
// stream and the request's sequence number (1-based); check reads the
// answer, returning an error for a wrong one.
type route struct {
	key    string // for -routes
	name   string
	target time.Duration
	note   string
	warm   bool
	limit  int // measured requests at most, when smaller than -requests
	// writes marks a route that stores: the database is vacuumed after
	// it, so the next route does not meet autovacuum cleaning up after it.
	writes bool
	// heavy marks a route of one heavy tenant, measured only when asked.
	heavy bool
	// prepare, when set, builds the route just before it is measured.
	prepare func() (*route, error)
	request func(r *rand.Rand, seq int64) (*http.Request, error)
	check   func(body []byte, o *outcome) error
}

// outcome is what a route's answers said beyond their status, for the notes
// under the table.
type outcome struct {
	mu            sync.Mutex
	searchResults int
	searchEmpty   int
	archived      int
	stale         int
	recalled      int // memories in recall answers
	emotional     int // of them, emotional patterns
}

const memoryPath = "/api/conversation-memory"

func benchRoutes(base string, fs []*facilitator) []*route {
	randomF := func(r *rand.Rand) *facilitator { return fs[r.IntN(len(fs))] }
	return []*route{
		{
			key: "get", name: "GET conversation (general)", target: 5 * time.Millisecond, warm: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) { return getMemory(base, randomF(r).token, nil) },
			check:   checkConversation,
		},
		{
			key: "get-learner", name: "GET conversation (learner_id)", target: 5 * time.Millisecond, warm: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				f := randomF(r)
				return getMemory(base, f.token, url.Values{"learner_id": {f.learners[r.IntN(len(f.learners))]}})
			},
			check: checkConversation,
		},
		{
			key: "search", name: "GET search (include_archive)", target: 20 * time.Millisecond, warm: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				return searchArchive(base, randomF(r).token, textgen.Pick(r, searchQueries))
			},
			check: checkSearch,
		},
		{
			key: "post", name: "POST 2 turns (offline summary)", target: 15 * time.Millisecond, warm: true, writes: true,
			request: func(r *rand.Rand, _ int64) (*http.Request, error) {
				f := randomF(r)
				k := r.IntN(len(f.learners) + 1) // 0: general
				var learner *string
				name := ""
				if k > 0 {
					learner, name = &f.learners[k-1], f.names[k-1]
				}
				return postTurns(base+memoryPath, f.token, learner, newExchange(r, name))
			},
			check: checkPost,
		},
	}
}

const archivingRouteName = "POST 2 turns that archive a segment"

// archivingRoute posts to conversations primed to the archive limit, so
// every request also archives a segment: the slow path of POST, which a
// client meets once every 25 posts.
func archivingRoute(base string, primed []primedConversation) *route {
	return &route{
		key:    "post-archive",
		name:   archivingRouteName,
		target: 15 * time.Millisecond,
		writes: true,
		note:   "each request archives 50 turns; one POST in 25 does this in steady use",
		limit:  len(primed),
		request: func(r *rand.Rand, seq int64) (*http.Request, error) {
			p := primed[seq-1]
			return postTurns(base+memoryPath, p.token, nil, newExchange(r, ""))
		},
		check: func(body []byte, o *outcome) error {
			if err := checkPost(body, o); err != nil {
				return err
			}
			if !jsonTrue(body, "archived") {
				return errors.New("the post did not archive a segment")
			}
			return nil
		},
	}
}

// getMemory asks for a conversation, or searches, with these query
// parameters.
func getMemory(base, token string, query url.Values) (*http.Request, error) {
	u := base + memoryPath
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

// searchArchive searches all of the facilitator's conversations, archived
// ones included, as the web client's search box does with "Include
// archive".
func searchArchive(base, token, q string) (*http.Request, error) {
	return getMemory(base, token, url.Values{"search": {q}, "include_archive": {"true"}})
}

func checkConversation(body []byte, _ *outcome) error {
	if !jsonTrue(body, "success") || bytes.Contains(body, []byte(`"conversation_update":null`)) {
		return errors.New("no active conversation returned")
	}
	return nil
}

func checkSearch(body []byte, o *outcome) error {
	count, ok := jsonInt(body, "count")
	if !ok || !jsonTrue(body, "success") {
		return errors.New("not a successful search answer")
	}
	o.mu.Lock()
	o.searchResults += count
	if count == 0 {
		o.searchEmpty++
	}
	o.mu.Unlock()
	return nil
}

func checkPost(body []byte, o *outcome) error {
	if added, _ := jsonInt(body, "turns_added"); !jsonTrue(body, "success") || added != 2 {
		return fmt.Errorf("turns_added %d, want 2: %.200s", added, body)
	}
	o.mu.Lock()
	if jsonTrue(body, "archived") {
		o.archived++
	}
	if jsonTrue(body, "summary_stale") {
		o.stale++
	}
	o.mu.Unlock()
	return nil
}

func jsonTrue(body []byte, key string) bool {
	return bytes.Contains(body, []byte(`"`+key+`":true`))
}

// jsonInt reads the first `"key":<integer>` of the body.
func jsonInt(body []byte, key string) (int, bool) {
	_, rest, ok := bytes.Cut(body, []byte(`"`+key+`":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.Atoi(string(rest[:end]))
	return n, err == nil
}

// newExchange writes a parent's message and the mentor's reply, with client
// ids as the web client sends them.
func newExchange(r *rand.Rand, learnerName string) []mentor.Turn {
	g := &textGen{r: r}
	t := g.newTopic()
	age := 5 + r.IntN(11)
	// The ids are random, not from r: the same run repeated must post new
	// turns, not resends the service would skip.
	return []mentor.Turn{
		{ID: uuid.NewString(), Role: mentor.RoleUser, Content: g.turn(mentor.RoleUser, t, learnerName, age)},
		{ID: uuid.NewString(), Role: mentor.RoleAssistant, Content: g.turn(mentor.RoleAssistant, t, learnerName, age)},
	}
}

func postTurns(u, token string, learner *string, turns []mentor.Turn) (*http.Request, error) {
	body, err := json.Marshal(map[string]any{"learner_id": learner, "conversation_turns": turns})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}
