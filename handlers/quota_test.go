package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mentormemory/app/apptest"
	"mentormemory/llm/llmtest"
	"mentormemory/mentor"
	"mentormemory/postgres/pgtest"
)

// replyWithUsage answers a chat completion with content, reporting tokens
// as what it cost.
func replyWithUsage(content string, tokens int) http.HandlerFunc {
	return llmtest.ReplyCosting(tokens, map[string]any{"role": "assistant", "content": content, "refusal": nil}, "stop")
}

// wantRefused checks a quota's refusal: a 429 that says which limit and
// when to try again, with Retry-After within the quota's window.
func wantRefused(t *testing.T, r apptest.Response, message string, window time.Duration) {
	t.Helper()
	r.WantStatus(http.StatusTooManyRequests)
	if got, _ := r.Body["error"].(string); r.Body["success"] != false || !strings.HasPrefix(got, message+"; try again in ") {
		t.Errorf("refusal %s, want the message %q and when to try again", r.Raw, message)
	}
	if seconds, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || seconds < 1 || seconds > int(window.Seconds()) {
		t.Errorf("Retry-After %q, want whole seconds up to %v", r.Header.Get("Retry-After"), window)
	}
}

// Every quota, on two servers sharing one database: the requests a limit
// allows pass on either server, the next one is refused by both with a
// 429, a Retry-After and a message that names the limit, a refused request
// changes nothing, and once the window has ended the facilitator is served
// again.
func TestEveryQuotaAnswers429AndRecoversAcrossTwoServers(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	// Each reply reports 6,000 tokens, so a 10,000-token day allows two
	// counselor calls: more than their estimates alone would allow.
	model := llmtest.NewChat(t, replyWithUsage("Try reading together tonight.", 6000))
	counselor := func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response {
		return s.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": fmt.Sprintf("How do I help with reading, take %d?", n)})
	}
	post := func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response {
		return s.PostTurns(t, u, "", apptest.Exchange(fmt.Sprintf("Question %d about fractions", n), fmt.Sprintf("Answer %d: use pizza slices", n))...)
	}
	countTurns := func(t *testing.T, s *apptest.Service, u apptest.User) int {
		return s.Count(t, `select count(*) from public.conversation_turns where facilitator_id = $1::uuid`, u.ID)
	}
	const minute, day = time.Minute, 24 * time.Hour

	cases := []struct {
		name    string
		limits  mentor.Limits
		counter mentor.Counter
		allowed int
		window  time.Duration
		refusal string
		request func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response
		// stored, when set, counts what the requests store: all the
		// allowed ones stored, a refused one nothing.
		stored     func(t *testing.T, s *apptest.Service, u apptest.User) int
		perRequest int // what each allowed request stores
		// modelCalled: the requests call the model, a refused one never.
		modelCalled bool
		// whileRefused, when set, is what still works at the limit.
		whileRefused func(t *testing.T, s *apptest.Service, u apptest.User)
	}{
		{
			name: "reads", limits: mentor.Limits{ReadsPerMinute: 3}, counter: mentor.ReadRequests, allowed: 3, window: minute,
			refusal: "Too many requests to read memory this minute",
			request: func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response {
				paths := []string{"/api/learners", "/api/conversation-memory", "/api/memories", "/api/opening-context"}
				return s.Call(t, u.Token, http.MethodGet, paths[n%len(paths)], nil)
			},
		},
		{
			name: "searches and recalls", limits: mentor.Limits{SearchesPerMinute: 3}, counter: mentor.SearchRequests, allowed: 3, window: minute,
			refusal: "Too many searches and recalls this minute",
			request: func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response {
				if n%2 == 0 {
					return s.Call(t, u.Token, http.MethodGet, "/api/conversation-memory?search=fractions", nil)
				}
				return s.Call(t, u.Token, http.MethodGet, "/api/memories/context?learner_id=null&message="+url.QueryEscape("fractions again"), nil)
			},
		},
		{
			name: "writes", limits: mentor.Limits{WritesPerMinute: 3}, counter: mentor.WriteRequests, allowed: 3, window: minute,
			refusal: "Too many changes this minute", request: post, stored: countTurns, perRequest: 2,
		},
		{
			name: "mentor requests", limits: mentor.Limits{ModelRequestsPerMinute: 3}, counter: mentor.ModelRequests, allowed: 3, window: minute,
			refusal: "Too many requests to the mentor this minute",
			request: func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response {
				if n%2 == 0 {
					return s.Call(t, u.Token, http.MethodPost, "/api/tools/call", toolCall("get_conversation_memory", `{"learner_id":null}`))
				}
				return counselor(t, s, u, n)
			},
		},
		{
			name: "learners", limits: mentor.Limits{LearnersPerDay: 2}, counter: mentor.LearnersAdded, allowed: 2, window: day,
			refusal: "The day's limit of new learners is reached",
			request: func(t *testing.T, s *apptest.Service, u apptest.User, n int) apptest.Response {
				return s.Call(t, u.Token, http.MethodPost, "/api/learners", map[string]any{"name": fmt.Sprintf("Learner %d", n)})
			},
			stored: func(t *testing.T, s *apptest.Service, u apptest.User) int {
				return s.Count(t, `select count(*) from public.learners where facilitator_id = $1::uuid`, u.ID)
			},
			perRequest: 1,
		},
		{
			name: "turns", limits: mentor.Limits{TurnsPerDay: 4}, counter: mentor.TurnsStored, allowed: 2, window: day,
			refusal: "The day's limit of stored turns is reached", request: post, stored: countTurns, perRequest: 2,
			whileRefused: func(t *testing.T, s *apptest.Service, u apptest.User) {
				// Resending what is stored stores nothing, so it costs nothing.
				if r := post(t, s, u, 1).WantStatus(http.StatusOK); number(r.Body["turns_added"]) != 0 {
					t.Errorf("a resend at the limit: %s, want nothing added", r.Raw)
				}
			},
		},
		{
			name: "model calls", limits: mentor.Limits{ModelCallsPerDay: 2}, counter: mentor.ModelCalls, allowed: 2, window: day,
			refusal: "The day's model budget is used up (model calls)", request: counselor, modelCalled: true,
		},
		{
			name: "model tokens", limits: mentor.Limits{ModelTokensPerDay: 10_000}, counter: mentor.ModelTokens, allowed: 2, window: day,
			refusal: "The day's model budget is used up (model tokens)", request: counselor, modelCalled: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := apptest.Options{DatabaseURL: databaseURL, Limits: tc.limits, ModelURL: model.URL}
			servers := []*apptest.Service{apptest.Start(t, opts), apptest.Start(t, opts)}
			u := servers[0].NewUser(t)
			for n := range tc.allowed {
				if r := tc.request(t, servers[n%2], u, n); r.Status >= 300 {
					t.Fatalf("request %d of %d allowed, on server %d: %s", n+1, tc.allowed, n%2+1, r)
				}
			}
			calls := len(model.Calls())
			for i, s := range servers {
				r := tc.request(t, s, u, tc.allowed+i)
				wantRefused(t, r, tc.refusal, tc.window)
			}
			if tc.modelCalled && len(model.Calls()) != calls {
				t.Errorf("refused requests called the model %d times", len(model.Calls())-calls)
			}
			if tc.stored != nil {
				if got, want := tc.stored(t, servers[0], u), tc.allowed*tc.perRequest; got != want {
					t.Errorf("%d stored after the refusals, want the allowed requests' %d", got, want)
				}
			}
			if tc.whileRefused != nil {
				tc.whileRefused(t, servers[1], u)
			}
			if got := apptest.Used(t, servers[0].Pool, u.ID, tc.counter); got == 0 {
				t.Errorf("nothing counted on %s", tc.counter)
			}

			apptest.EndWindow(t, servers[0].Pool, u.ID, tc.counter)
			if r := tc.request(t, servers[1], u, tc.allowed+len(servers)); r.Status >= 300 {
				t.Fatalf("once the window ended: %s, want the request served", r)
			}
		})
	}
}

// Summaries are charged to the model budget like the counselor's calls,
// by their size: a five-character post with force_regenerate sends the
// whole segment to the summarizer and pays for all of it, every time, until
// the day's tokens are spent; then its turns are still stored, and the
// summary waits, marked stale, without the model being asked.
func TestSummariesChargeTheModelBudget(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Emma compares fractions with pizza slices.", "stop"))
	svc := apptest.Start(t, apptest.Options{ModelURL: model.URL, ModelSummaries: true,
		Limits: mentor.Limits{ModelCallsPerDay: 100, ModelTokensPerDay: 200_000}})
	u := svc.NewUser(t)
	paragraph := strings.Repeat("Emma compared fractions with pizza slices and paper strips. ", 70)
	segment := make([]mentor.Turn, 20)
	for i := range segment {
		segment[i] = mentor.Turn{Role: []string{mentor.RoleUser, mentor.RoleAssistant}[i%2], Content: fmt.Sprintf("%d. %s", i, paragraph)}
	}
	segmentTokens := int64(len(segment) * len(paragraph) / 4)
	tokens := func() int64 { return apptest.Used(t, svc.Pool, u.ID, mentor.ModelTokens) }

	svc.PostTurns(t, u, "", segment...).WantStatus(http.StatusOK)
	if calls := apptest.Used(t, svc.Pool, u.ID, mentor.ModelCalls); calls != 1 {
		t.Fatalf("the summary counted %d model calls, want 1", calls)
	}
	if got := tokens(); got < segmentTokens {
		t.Fatalf("the summary of a %d-token segment counted %d tokens", segmentTokens, got)
	}

	regenerate := func(n int) apptest.Response {
		body := apptest.ConversationBody("", apptest.Exchange(fmt.Sprintf("Hi %d", n), "Hello"))
		body["force_regenerate"] = true
		return svc.Call(t, u.Token, http.MethodPost, "/api/conversation-memory", body).WantStatus(http.StatusOK)
	}
	before := tokens()
	regenerate(0)
	if paid := tokens() - before; paid < segmentTokens {
		t.Fatalf("a regenerated summary counted %d tokens, want at least the segment's %d", paid, segmentTokens)
	}
	for n := 1; ; n++ {
		if n == 10 {
			t.Fatalf("ten regenerations of %d tokens each fitted in a day of 200,000", segmentTokens)
		}
		asked := len(model.Calls())
		r := regenerate(n)
		if r.Object("conversation_update")["summary_stale"] != true {
			continue
		}
		if len(model.Calls()) != asked || number(r.Body["turns_added"]) != 2 {
			t.Fatalf("past the budget: the model was asked %d times, %v turns stored; want 0 and 2",
				len(model.Calls())-asked, r.Body["turns_added"])
		}
		if want := "Stored 2 new turns; the summary could not be updated: The day's model budget is used up (model tokens); try again in "; !strings.HasPrefix(r.Body["message"].(string), want) {
			t.Errorf("message %q, want it to say the budget is used up and until when", r.Body["message"])
		}
		break
	}
}

// A model call larger than a whole day's tokens is refused as too large,
// not told to wait for a day that would not fit it either.
func TestACallLargerThanTheDayIsTooLarge(t *testing.T) {
	model := llmtest.NewChat(t, llmtest.ReplyContent("Hello.", "stop"))
	svc, u := apptest.StartWithUser(t, apptest.Options{ModelURL: model.URL, Limits: mentor.Limits{ModelTokensPerDay: 10_000}})
	story, answer := strings.Repeat("A long story about reading. ", 700), strings.Repeat("A long answer. ", 1200)
	history := append(apptest.Exchange(story, answer), apptest.Exchange(story, answer)...)
	r := svc.Call(t, u.Token, http.MethodPost, "/api/counselor", map[string]any{"message": "And now?", "history": history})
	r.WantStatus(http.StatusRequestEntityTooLarge)
	if got, _ := r.Body["error"].(string); !strings.HasPrefix(got, "This needs more of the model than a whole day's budget") {
		t.Errorf("too large: %s", r.Raw)
	}
	if len(model.Calls()) != 0 {
		t.Errorf("the model was asked")
	}
}

// Requests racing at a limit on two servers never pass it together: the
// counter's row takes them one at a time, so exactly the limit's number is
// served.
func TestRacingRequestsNeverPassALimit(t *testing.T) {
	databaseURL := pgtest.NewDatabase(t)
	opts := apptest.Options{DatabaseURL: databaseURL, Limits: mentor.Limits{ReadsPerMinute: 5}}
	servers := []*apptest.Service{apptest.Start(t, opts), apptest.Start(t, opts)}
	u := servers[0].NewUser(t)
	statuses := make([]int, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = servers[i%2].Call(t, u.Token, http.MethodGet, "/api/learners", nil).Status
		})
	}
	wg.Wait()
	served, refused := 0, 0
	for _, status := range statuses {
		switch status {
		case http.StatusOK:
			served++
		case http.StatusTooManyRequests:
			refused++
		}
	}
	if served != 5 || refused != 15 {
		t.Fatalf("%d served and %d refused of 20 racing reads, want 5 and 15: %v", served, refused, statuses)
	}
}
