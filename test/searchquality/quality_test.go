// The search quality test: the labelled set goes through the real HTTP API
// the way the benchmark loads its data, every question is asked verbatim,
// and recall of the session holding the answer is compared with the
// benchmark's reference, plain BM25 over turns.
//
//	DATABASE_URL='postgres://postgres@127.0.0.1:54330/postgres?sslmode=disable' \
//	    go test -count=1 -run . -v ./searchquality/
//
// SEARCHQUALITY_VERBOSE=1 (or -searchquality.verbose) logs every miss with
// the five sessions returned instead; SEARCHQUALITY_ALTERNATIVES=1 (or
// -searchquality.alternatives) also measures the ranking experiments of
// alternatives_test.go; SEARCHQUALITY_SEED=n measures another draw of the
// set.
package searchquality

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/app/apptest"
	"mentormemory/auth"
	"mentormemory/mentor"
)

var (
	verboseFlag = flag.Bool("searchquality.verbose", false,
		"log every missed question with the top 5 sessions returned (or SEARCHQUALITY_VERBOSE=1)")
	alternativesFlag = flag.Bool("searchquality.alternatives", false,
		"also measure the ranking alternatives of alternatives_test.go (or SEARCHQUALITY_ALTERNATIVES=1)")
)

func verbose() bool { return *verboseFlag || os.Getenv("SEARCHQUALITY_VERBOSE") == "1" }

func alternatives() bool {
	return *alternativesFlag || os.Getenv("SEARCHQUALITY_ALTERNATIVES") == "1"
}

// The requirement: at least this recall@5, and no worse than the
// reference BM25 by more than baselineSlack; for the questions that name
// a time, at least minDatedRecallAt5 (0.783 before search preferred the
// time named, 0.950 with it); for those that ask when something happened,
// at least minWhenRecallAt5 (0.884 before search preferred the turns that
// say when, 0.957 with it).
const (
	minRecallAt5      = 0.80
	baselineSlack     = 0.02
	minDatedRecallAt5 = 0.90
	minWhenRecallAt5  = 0.93
)

const testSecret = apptest.Secret

// service is one running memory service on a fresh database.
type service struct {
	pool   *pgxpool.Pool
	url    string
	client *http.Client
}

func startService(t *testing.T) *service {
	t.Helper()
	// 50 turns per archive segment, the production default.
	svc := apptest.Start(t, apptest.Options{ArchiveTurns: 50})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: time.Minute}
	return &service{pool: svc.Pool, url: svc.URL, client: client}
}

// call sends one request and decodes the JSON answer into out (if not
// nil). It returns errors rather than failing the test, as it runs on
// several goroutines.
func (s *service) call(token, method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, reader)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// account is a facilitator as the service knows them.
type account struct {
	f        *Facilitator
	id       string
	token    string
	learners map[string]string // learner name → id
}

func (s *service) newAccount(t *testing.T, f *Facilitator) *account {
	t.Helper()
	id := uuid.NewString()
	if _, err := s.pool.Exec(context.Background(),
		`insert into auth.users (id, email) values ($1::uuid, $2)`, id, f.Key+"@example.com"); err != nil {
		t.Fatal(err)
	}
	token, err := auth.MintHS256(testSecret, id, "", 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a := &account{f: f, id: id, token: token, learners: map[string]string{}}
	for _, l := range f.Learners {
		var res struct {
			Learner mentor.Learner `json:"learner"`
		}
		if err := s.call(token, http.MethodPost, "/api/learners", map[string]any{"name": l.Name}, &res); err != nil {
			t.Fatal(err)
		}
		a.learners[l.Name] = res.Learner.ID
	}
	return a
}

// learnerID is the API's learner_id for a memory context: null for general.
func (a *account) learnerID(name string) any {
	if name == "" {
		return nil
	}
	return a.learners[name]
}

// load posts every session the way the benchmark does: two turns at a
// time, each to its learner's context (or the general one) with the time
// it was said, then clears every context the session used, which archives
// it. today dates the sessions of the last weeks.
func (s *service) load(a *account, today time.Time) error {
	for _, sess := range a.f.Sessions {
		var contexts []string
		for i := 0; i < len(sess.Turns); {
			learner := sess.Turns[i].Learner
			j := i
			for j < len(sess.Turns) && j < i+2 && sess.Turns[j].Learner == learner {
				j++
			}
			turns := make([]map[string]string, 0, 2)
			for k, t := range sess.Turns[i:j] {
				turns = append(turns, map[string]string{"id": t.ID, "role": t.Role, "content": t.Content,
					"created_at": sess.TurnTime(today, i+k).Format(time.RFC3339)})
			}
			body := map[string]any{"conversation_turns": turns, "learner_id": a.learnerID(learner)}
			if err := s.call(a.token, http.MethodPost, "/api/conversation-memory", body, nil); err != nil {
				return fmt.Errorf("%s: %w", sess.ID, err)
			}
			if !slices.Contains(contexts, learner) {
				contexts = append(contexts, learner)
			}
			i = j
		}
		for _, learner := range contexts {
			path := "/api/conversation-memory"
			if id := a.learnerID(learner); id != nil {
				path += "?learner_id=" + id.(string)
			}
			if err := s.call(a.token, http.MethodDelete, path, nil, nil); err != nil {
				return fmt.Errorf("%s: clear: %w", sess.ID, err)
			}
		}
	}
	return nil
}

// archiveSessions maps every archive row to the session whose turns it
// holds, by the client turn ids we posted ("<session>-tNNN"), and checks
// that no row mixes sessions and that every session was archived.
func (s *service) archiveSessions(t *testing.T, d *Dataset) map[string]string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `select a.id::text, t->>'id'
		from public.conversation_history_archive a, jsonb_array_elements(a.conversation_turns) t`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	rowSession := map[string]string{}
	rowsPerSession := map[string]map[string]bool{}
	for rows.Next() {
		var archiveID, turnID string
		if err := rows.Scan(&archiveID, &turnID); err != nil {
			t.Fatal(err)
		}
		session := turnID[:strings.LastIndex(turnID, "-t")]
		if prev, ok := rowSession[archiveID]; ok && prev != session {
			t.Fatalf("archive row %s holds turns of %s and %s", archiveID, prev, session)
		}
		rowSession[archiveID] = session
		if rowsPerSession[session] == nil {
			rowsPerSession[session] = map[string]bool{}
		}
		rowsPerSession[session][archiveID] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	split := 0
	for _, f := range d.Facilitators {
		for _, sess := range f.Sessions {
			switch n := len(rowsPerSession[sess.ID]); {
			case n == 0:
				t.Fatalf("session %s was not archived", sess.ID)
			case n > 1:
				split++
			}
		}
	}
	t.Logf("%d archive rows; %d sessions span more than one row", len(rowSession), split)
	return rowSession
}

// searchResult is the part of a search answer the measurement reads.
type searchResult struct {
	ID      string  `json:"id"`
	Rank    float64 `json:"rank"`
	Snippet string  `json:"snippet"`
}

// search runs a question verbatim as its facilitator, with the archive.
func (s *service) search(a *account, text string, limit int) ([]searchResult, error) {
	var res struct {
		Results []searchResult `json:"results"`
	}
	q := url.Values{"search": {text}, "include_archive": {"true"}, "limit": {fmt.Sprint(limit)}}
	err := s.call(a.token, http.MethodGet, "/api/conversation-memory?"+q.Encode(), nil, &res)
	return res.Results, err
}

// forEachAccount runs fn for every account at once: facilitators are
// independent, and loading one at a time would take minutes.
func forEachAccount(accounts []*account, fn func(a *account) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(accounts))
	for i, a := range accounts {
		wg.Go(func() { errs[i] = fn(a) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestSearchQuality loads the labelled set through the API, asks every
// question, and holds the ranking to the requirement.
func TestSearchQuality(t *testing.T) {
	started := time.Now()
	svc := startService(t) // first: it skips the test when there is no database
	d := loadDataset(t)
	var accounts []*account
	byKey := map[string]*account{}
	for i := range d.Facilitators {
		a := svc.newAccount(t, &d.Facilitators[i])
		accounts = append(accounts, a)
		byKey[a.f.Key] = a
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if err := forEachAccount(accounts, func(a *account) error { return svc.load(a, today) }); err != nil {
		t.Fatal(err)
	}
	loaded := time.Now()
	rowSession := svc.archiveSessions(t, &d)

	outs, top5, err := askAll(svc, &d, accounts, rowSession)
	if err != nil {
		t.Fatal(err)
	}
	searched := time.Now()

	results := map[string][]outcome{"service": outs, "bm25 (Go, turns)": bm25Outcomes(&d)}
	names := []string{"service", "bm25 (Go, turns)"}
	if alternatives() {
		measureAlternatives(t, svc.pool, &d, accounts, rowSession, results)
	}
	defer func() {
		// Last, as it changes the data the assertions below were made on.
		if n := history(t); n > 0 {
			long := measureLongHistory(t, svc, &d, accounts, rowSession, n, results)
			t.Logf("recall of the labelled session with a long history (the copy ranks by words alone: compare ALL):\n%s",
				table(append([]string{"service"}, long...), results))
		}
	}()
	t.Logf("recall of the labelled session (%d questions, %d facilitators; MRR is MRR@%d):\n%s",
		len(d.Questions), len(d.Facilitators), cutoff, table(names, results))
	t.Logf("recall@5 by the length of the answer session:\n%s", bucketTable(&d, names, results))
	t.Logf("time: load %.1fs, search %.1fs, total %.1fs",
		loaded.Sub(started).Seconds(), searched.Sub(loaded).Seconds(), time.Since(started).Seconds())

	// Misses split by what a ranking change could do about them: a
	// question that shares no distinctive word with its session (only
	// common ones, or none, beyond the learners' names) can only be found
	// by matching meaning, not by reweighting words.
	misses, gaps := 0, 0
	shared := make([]string, len(outs))
	for i, o := range outs {
		if !o.within(cutoff) {
			misses++
			all, distinctive := svc.sharedStems(t, &d, byKey[o.q.Facilitator], o.q)
			shared[i] = fmt.Sprintf("%v, distinctive %v", all, distinctive)
			if len(distinctive) == 0 {
				gaps++
			}
		}
	}
	t.Logf("%d misses at %d: %d share no distinctive word with the answer session, %d do but rank too low",
		misses, cutoff, gaps, misses-gaps)
	if verbose() {
		logMisses(t, svc, byKey, rowSession, outs, top5, shared)
	}

	got, kinds := summarize(outs)
	base, _ := summarize(results["bm25 (Go, turns)"])
	if got.r5 < minRecallAt5 {
		t.Errorf("service recall@5 = %.3f, want ≥ %.2f", got.r5, minRecallAt5)
	}
	if dated := kinds[KindDated]; dated.r5 < minDatedRecallAt5 {
		t.Errorf("service recall@5 of the %d questions that name a time = %.3f, want ≥ %.2f",
			dated.n, dated.r5, minDatedRecallAt5)
	}
	if when := kinds[KindWhen]; when.r5 < minWhenRecallAt5 {
		t.Errorf("service recall@5 of the %d questions that ask when something happened = %.3f, want ≥ %.2f",
			when.n, when.r5, minWhenRecallAt5)
	}
	if got.r5 < base.r5-baselineSlack {
		t.Errorf("service recall@5 = %.3f, want ≥ reference BM25 %.3f − %.2f", got.r5, base.r5, baselineSlack)
	}
}

// askAll asks every question as its facilitator and returns each one's
// outcome and the results it read.
func askAll(svc *service, d *Dataset, accounts []*account, rowSession map[string]string) ([]outcome, [][]searchResult, error) {
	outs := make([]outcome, len(d.Questions))
	top := make([][]searchResult, len(d.Questions))
	err := forEachAccount(accounts, func(a *account) error {
		for i, q := range d.Questions {
			if q.Facilitator != a.f.Key {
				continue
			}
			results, err := svc.search(a, q.Text, depth)
			if err != nil {
				return fmt.Errorf("%s: %w", q.ID, err)
			}
			sessions := make([]string, len(results))
			for j, r := range results {
				sessions[j] = rowSession[r.ID]
			}
			outs[i], top[i] = newOutcome(q, sessions), results
		}
		return nil
	})
	return outs, top, err
}

// logMisses shows each missed question with what came back instead and
// where the right session actually ranked.
func logMisses(t *testing.T, svc *service, byKey map[string]*account, rowSession map[string]string,
	outs []outcome, top5 [][]searchResult, shared []string) {
	t.Helper()
	for i, o := range outs {
		if o.within(cutoff) {
			continue
		}
		a := byKey[o.q.Facilitator]
		deep := "not matched at all"
		if all, err := svc.search(a, o.q.Text, mentor.MaxSearchLimit); err == nil {
			for j, r := range all {
				if rowSession[r.ID] == o.q.SessionID {
					deep = fmt.Sprintf("rank %d, score %.3f", j+1, r.Rank)
					break
				}
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "MISS %s [%s] %q\n    want %s (%s); shares %s; evidence: %s\n", o.q.ID, o.q.Kind, o.q.Text,
			o.q.SessionID, deep, shared[i], o.q.Evidence)
		for j, r := range top5[i][:min(cutoff, len(top5[i]))] {
			fmt.Fprintf(&b, "    %d. %s score %.3f: %s\n", j+1, rowSession[r.ID], r.Rank, oneLine(r.Snippet, 140))
		}
		t.Log(b.String())
	}
}

// sharedStems lists the english stems a question has in common with the
// session holding its answer, the learners' names left out, and the
// distinctive ones among them: said in at most a tenth of the account's
// archive rows, so that matching them is evidence, not noise.
func (s *service) sharedStems(t *testing.T, d *Dataset, a *account, q Question) (all, distinctive []string) {
	t.Helper()
	f, sess := d.Session(q.SessionID)
	var text strings.Builder
	for _, turn := range sess.Turns {
		text.WriteString(turn.Content + "\n")
	}
	var names []string
	for _, l := range f.Learners {
		names = append(names, l.Name)
	}
	err := s.pool.QueryRow(context.Background(), `
		with shared as (
			select unnest(tsvector_to_array(to_tsvector('english', $1)))
			intersect select unnest(tsvector_to_array(to_tsvector('english', $2)))
			except select unnest(tsvector_to_array(to_tsvector('english', $3)))
		),
		df as (
			select s.x, count(a.id) as df
			from shared s(x)
			left join public.conversation_history_archive a
				on a.facilitator_id = $4::uuid and a.search_vector @@ plainto_tsquery('simple', s.x)
			group by s.x
		)
		select coalesce(array_agg(x order by x), '{}'),
			coalesce(array_agg(x order by x) filter (where df <= 0.1 * (select count(*)
				from public.conversation_history_archive where facilitator_id = $4::uuid)), '{}')
		from df`,
		q.Text, text.String(), strings.Join(names, " "), a.id).Scan(&all, &distinctive)
	if err != nil {
		t.Fatal(err)
	}
	return all, distinctive
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
