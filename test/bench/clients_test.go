package bench

import (
	"context"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"mentormemory/app"
	"mentormemory/mentor"
	"mentormemory/summarizer"
)

func TestClientsConfigValidate(t *testing.T) {
	good := ClientsConfig{Clients: 50, Duration: time.Minute, ThinkMin: 500 * time.Millisecond, ThinkMax: 2 * time.Second,
		Modes: "offline,model", ModelLatency: time.Second}
	if err := good.validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	for name, change := range map[string]func(*ClientsConfig){
		"no clients":           func(c *ClientsConfig) { c.Clients = 0 },
		"no duration":          func(c *ClientsConfig) { c.Duration = 0 },
		"no think time":        func(c *ClientsConfig) { c.ThinkMin = 0 },
		"think max below min":  func(c *ClientsConfig) { c.ThinkMax = c.ThinkMin / 2 },
		"unknown mode":         func(c *ClientsConfig) { c.Modes = "offline,online" },
		"model faster than tx": func(c *ClientsConfig) { c.ModelLatency = maxTransaction },
	} {
		c := good
		change(&c)
		if c.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	offline := good
	offline.Modes, offline.ModelLatency = "offline", maxTransaction
	if err := offline.validate(); err != nil {
		t.Errorf("a short model latency matters only with the model: %v", err)
	}
}

func TestServerLogPerMode(t *testing.T) {
	c := ClientsConfig{ServerLog: ".data/bench-clients-server.log"}
	if got := c.serverLog(ModelMode); got != ".data/bench-clients-server-model.log" {
		t.Errorf("model mode's log %q", got)
	}
	c.ServerLog = "server"
	if got := c.serverLog(OfflineMode); got != "server-offline" {
		t.Errorf("offline mode's log %q", got)
	}
}

func TestWithApplicationName(t *testing.T) {
	got := withApplicationName("postgres://u@127.0.0.1:5432/db?sslmode=disable", "bench")
	u, err := url.Parse(got)
	if err != nil || u.Query().Get("application_name") != "bench" || u.Query().Get("sslmode") != "disable" || u.Path != "/db" {
		t.Errorf("URL became %q", got)
	}
	if got := withApplicationName("host=127.0.0.1 dbname=db application_name=x", "bench"); !strings.HasSuffix(got, " application_name=bench") {
		t.Errorf("key=value string became %q", got)
	}
}

func TestEachClientIsAnotherFacilitator(t *testing.T) {
	var fs []*facilitator
	for i := range 10 {
		fs = append(fs, &facilitator{id: string(rune('a' + i)), learners: []string{"l1", "l2"}, names: []string{"Emma", "Max"}})
	}
	clients := pickClients(fs, 10, rand.New(rand.NewPCG(1, 1)))
	seen := map[string]bool{}
	learners := 0
	for _, sc := range clients {
		if seen[sc.f.id] {
			t.Errorf("facilitator %s has two clients", sc.f.id)
		}
		seen[sc.f.id] = true
		if sc.learner != nil {
			learners++
			if sc.name == "" || sc.key() != *sc.learner {
				t.Errorf("a learner's client: name %q, key %q", sc.name, sc.key())
			}
		} else if sc.name != "" || sc.key() != "00000000-0000-0000-0000-000000000000" {
			t.Errorf("a general client: name %q, key %q", sc.name, sc.key())
		}
	}
	if learners == 0 || learners == 10 {
		t.Errorf("%d of 10 clients talk about a learner: want both kinds", learners)
	}
}

// The fake model must answer the app's own clients, configured as the
// clients run configures the app: a summary to the summarizer, no
// memories to the extractor, each after the latency.
func TestFakeModelAnswersTheAppsModelClients(t *testing.T) {
	m := newFakeModel(50*time.Millisecond, 1)
	defer m.close()
	cfg, _, err := benchConfig("postgres://127.0.0.1/unused", map[string]string{"OPENAI_API_KEY": "bench-fake-key", "OPENAI_BASE_URL": m.url()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	turns := []mentor.Turn{{Role: mentor.RoleUser, Content: "Emma cried over fractions."}, {Role: mentor.RoleAssistant, Content: "Try a timer."}}

	var wg sync.WaitGroup
	summaries := make([]string, 3)
	start := time.Now()
	for i := range summaries {
		wg.Go(func() {
			summary, err := summarizer.NewOpenAI(cfg.Model.Chat).Summarize(ctx, mentor.SummaryRequest{Turns: turns, LearnerName: "Emma"})
			if err != nil {
				t.Errorf("summary: %v", err)
			}
			summaries[i] = summary
		})
	}
	wg.Wait()
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("the model answered in %s, before its latency", took)
	}
	if summaries[0] == "" || summaries[0] == summaries[1] {
		t.Errorf("summaries %q: want generated text, different each call", summaries[:2])
	}
	memories, err := app.NewExtractor(cfg.Model, nil, nil).Extract(ctx, mentor.ExtractionRequest{Turns: turns, LearnerName: "Emma"})
	if err != nil || len(memories) != 0 {
		t.Errorf("extraction: %v, %v; want no memories", memories, err)
	}
	if s, e, in := m.summaries.Load(), m.extractions.Load(), m.maxInFlight.Load(); s != 3 || e != 1 || in < 2 {
		t.Errorf("%d summaries, %d extractions, at most %d in flight; want 3, 1 and several", s, e, in)
	}
}
