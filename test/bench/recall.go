package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/mentor"
	"mentormemory/test/textgen"
)

// The learner memory routes: recall for the next reply, light and deep, and
// the stored opening of the next session. Each request addresses a random
// learner of the memory data set (see MemoryShape).

// memoryLearner is a learner with loaded memories.
type memoryLearner struct {
	facilitator *facilitator
	id          string
	name, topic string
	// lastMessage is the live session's message, which a light recall
	// message must share a word with.
	lastMessage string
}

// benchMemoryLearners reads the learners of the memory data set, or none
// when it was not loaded.
func benchMemoryLearners(ctx context.Context, admin *pgxpool.Pool, fs []*facilitator) ([]memoryLearner, error) {
	var loaded bool
	if err := admin.QueryRow(ctx, `select to_regclass('bench.memory_learners') is not null
		and exists (select from bench.loads where shape like $1 || '%')`, memoryShapePrefix).Scan(&loaded); err != nil {
		return nil, err
	}
	if !loaded {
		return nil, nil
	}
	byID := map[string]*facilitator{}
	for _, f := range fs {
		byID[f.id] = f
	}
	rows, err := admin.Query(ctx, `select b.facilitator_id::text, b.learner_id::text, b.name, b.topic, b.last_message
		from bench.memory_learners b
		join public.learners l on l.facilitator_id = b.facilitator_id and l.id = b.learner_id
		order by b.learner_id`)
	if err != nil {
		return nil, err
	}
	var fid string
	var l memoryLearner
	var learners []memoryLearner
	_, err = pgx.ForEachRow(rows, []any{&fid, &l.id, &l.name, &l.topic, &l.lastMessage}, func() error {
		if l.facilitator = byID[fid]; l.facilitator == nil {
			return fmt.Errorf("learner %s belongs to %s, not a benchmark facilitator", l.id, fid)
		}
		learners = append(learners, l)
		return nil
	})
	return learners, err
}

// resetSessionsSQL makes each memory learner's live session one exchange
// old, active now, with the loaded message: the state light recall needs.
// Earlier runs' posts may have advanced or ended it, and the idle limit may
// have passed since the load.
const resetSessionsSQL = `
with reset as (
	update public.mentor_sessions s
	set exchanges = 1, last_message = b.last_message, last_activity_at = now()
	from bench.memory_learners b
	where s.facilitator_id = b.facilitator_id and s.learner_id = b.learner_id and s.ended_at is null
)
insert into public.mentor_sessions (facilitator_id, learner_id, exchanges, last_message)
select b.facilitator_id, b.learner_id, 1, b.last_message
from bench.memory_learners b
where not exists (select from public.mentor_sessions s
	where s.facilitator_id = b.facilitator_id and s.learner_id = b.learner_id and s.ended_at is null)`

// Targets of the learner memory routes (2 cores).
const (
	recallLightTarget = 10 * time.Millisecond
	recallDeepTarget  = 30 * time.Millisecond
	openingTarget     = 3 * time.Millisecond
)

const recallNote = "recall by words; meaning not measured (no embedding model in the bench: embeddings are NULL)"

// memoryRoutes returns the recall and opening routes; each is built, and
// the sessions reset, just before it is measured.
func memoryRoutes(ctx context.Context, admin *pgxpool.Pool, base string, learners []memoryLearner) []*route {
	randomLearner := func(r *rand.Rand) *memoryLearner { return &learners[r.IntN(len(learners))] }
	get := func(l *memoryLearner, path string, query url.Values) (*http.Request, error) {
		query.Set("learner_id", l.id)
		req, err := http.NewRequest(http.MethodGet, base+path+"?"+query.Encode(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+l.facilitator.token)
		return req, nil
	}
	recall := func(key, name, mode string, target time.Duration, note string, messages []string) *route {
		return &route{key: key, name: name, prepare: func() (*route, error) {
			if len(learners) == 0 {
				return nil, errors.New("no learner memories loaded: run bench load with -memories (scripts/bench does)")
			}
			if err := checkPlans(learners, messages, mode); err != nil {
				return nil, err
			}
			start := time.Now()
			if _, err := admin.Exec(ctx, resetSessionsSQL); err != nil {
				return nil, fmt.Errorf("resetting the live sessions: %w", err)
			}
			logf("%s: reset %d live sessions to one exchange in %.2f s", name, len(learners), time.Since(start).Seconds())
			return &route{
				key: key, name: name, target: target, warm: true,
				note: note + "; " + recallNote,
				request: func(r *rand.Rand, _ int64) (*http.Request, error) {
					l := randomLearner(r)
					message := recallMessage(textgen.Pick(r, messages), l, r)
					return get(l, "/api/memories/context", url.Values{"message": {message}})
				},
				check: checkRecall(mode),
			}, nil
		}}
	}
	return []*route{
		recall("recall-light", "GET recall (light)", mentor.RetrievalLight, recallLightTarget,
			"the second message of a live session, on its topic, with no feeling shown", lightMessages),
		recall("recall-deep", "GET recall (deep)", mentor.RetrievalDeep, recallDeepTarget,
			"a message with an emotional cue: adds topic boosts and emotional patterns", deepMessages),
		{key: "opening", name: "GET opening context", prepare: func() (*route, error) {
			if len(learners) == 0 {
				return nil, errors.New("no learner memories loaded: run bench load with -memories (scripts/bench does)")
			}
			return &route{
				key: "opening", name: "GET opening context", target: openingTarget, warm: true,
				note: "the opening stored when the learner's last session ended",
				request: func(r *rand.Rand, _ int64) (*http.Request, error) {
					return get(randomLearner(r), "/api/opening-context", url.Values{})
				},
				check: func(body []byte, _ *outcome) error {
					if !jsonTrue(body, "success") || !bytes.Contains(body, []byte(`"opening":{`)) {
						return fmt.Errorf("no opening: %.200s", body)
					}
					return nil
				},
			}, nil
		}},
	}
}

// recallMessage fills a message template for a learner: the learner's name
// and topic, and anything else at random.
func recallMessage(tmpl string, l *memoryLearner, r *rand.Rand) string {
	return textgen.Capitalize(textgen.Fill(tmpl, func(slot string) string {
		switch slot {
		case "Name":
			return l.name
		case "skill":
			return l.topic
		}
		return drawWord(r, slot)
	}))
}

// checkPlans makes sure, before anything is measured, that the app will
// plan each message a learner may be sent at the intended depth (see
// mentor.PlanRetrieval), so a wrong answer in the run means a wrong app.
// Light messages depend only on the learner's name and topic, so this
// covers every one.
func checkPlans(learners []memoryLearner, messages []string, mode string) error {
	r := rand.New(rand.NewPCG(1, 1))
	for i := range learners {
		l := &learners[i]
		session := mentor.SessionState{Exchanges: 1, PreviousMessage: l.lastMessage}
		for _, tmpl := range messages {
			message := recallMessage(tmpl, l, r)
			if plan := mentor.PlanRetrieval(message, session); plan.Deep != (mode == mentor.RetrievalDeep) {
				return fmt.Errorf("the bench's %s message %q after %q plans %v (%v): fix the message pool",
					mode, message, l.lastMessage, plan.Deep, plan.Reasons)
			}
		}
	}
	return nil
}

// checkRecall checks the retrieval mode of a recall answer and counts what
// it recalled.
func checkRecall(mode string) func(body []byte, o *outcome) error {
	want := []byte(`"retrieval":{"mode":"` + mode + `"`)
	score := []byte(`"score":`)
	return func(body []byte, o *outcome) error {
		if !jsonTrue(body, "success") || !bytes.Contains(body, want) {
			_, retrieval, _ := bytes.Cut(body, []byte(`"retrieval":`))
			return fmt.Errorf("retrieval mode is not %s: %.200s", mode, retrieval)
		}
		recalled := bytes.Count(body, score)
		var emotional int
		if _, rest, ok := bytes.Cut(body, []byte(`"emotional_patterns":[`)); ok {
			if end := bytes.Index(rest, []byte(`"retrieval":`)); end >= 0 {
				emotional = bytes.Count(rest[:end], score)
			}
		}
		o.mu.Lock()
		o.recalled += recalled
		o.emotional += emotional
		o.mu.Unlock()
		return nil
	}
}
