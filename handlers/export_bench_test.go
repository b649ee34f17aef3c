package handlers_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"mentormemory/app/apptest"
)

// BenchmarkExportOf100kTurns downloads, through the HTTP API, the archive
// of a facilitator with 100,000 turns about one learner, 2,000 archived
// conversations of 50 turns each holding their turns too (about 40 MB of
// JSON Lines). It reports the p50 and p99 of one export and the peak
// resident memory of the process (server and client) during the exports,
// and the peak's rise over the memory before them: the export streams, so
// the rise stays a few MB whatever the archive's size.
//
//	DATABASE_URL=... go test ./handlers -run '^$' -bench ExportOf100kTurns -benchtime 5x
func BenchmarkExportOf100kTurns(b *testing.B) {
	svc := apptest.Start(b, apptest.Options{})
	u := accountOf100kTurns(b, svc)

	before := resident(b, "VmRSS")
	resetPeakResident(b)
	times := make([]time.Duration, 0, b.N)
	var size int64
	for b.Loop() {
		start := time.Now()
		size, _ = download(b, svc, u, false)
		times = append(times, time.Since(start))
	}
	peak := resident(b, "VmHWM")
	reportTimes(b, times)
	b.ReportMetric(float64(size)/(1<<20), "archive-MB")
	b.ReportMetric(float64(peak)/1024, "peak-rss-MB")
	b.ReportMetric(float64(peak-before)/1024, "peak-rise-MB")
}

// BenchmarkImportOf100kTurns times importing the archive of
// BenchmarkExportOf100kTurns into a new account through the API, one
// transaction; each iteration imports into an account of its own.
//
//	DATABASE_URL=... go test ./handlers -run '^$' -bench ImportOf100kTurns -benchtime 2x
func BenchmarkImportOf100kTurns(b *testing.B) {
	svc := apptest.Start(b, apptest.Options{})
	_, archive := download(b, svc, accountOf100kTurns(b, svc), true)
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		u := svc.NewUser(b)
		start := time.Now()
		res := apptest.Client{URL: svc.URL}.Do(b, apptest.Request{Method: http.MethodPost, Path: "/api/import", Token: u.Token, Body: archive,
			Header: http.Header{"Content-Type": {"application/x-ndjson"}}})
		times = append(times, time.Since(start))
		if res.Status != http.StatusOK {
			b.Fatalf("import answered %s", res)
		}
	}
	reportTimes(b, times)
}

func reportTimes(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100].Milliseconds()), "p99-ms")
}

// accountOf100kTurns is a new facilitator with 100,000 turns about one
// learner, seeded in SQL.
func accountOf100kTurns(b *testing.B, svc *apptest.Service) apptest.User {
	u := svc.NewUser(b)
	learner := svc.NewLearner(b, u, "Alex")
	apptest.Exec(b, svc.Pool, `insert into conversation_turns (facilitator_id, learner_id, role, content, client_turn_id)
		select $1::uuid, $2::uuid, case when i % 2 = 0 then 'user' else 'assistant' end,
			'Alex worked through fraction problem ' || i || ' with pizza slices and explained each step aloud to the class.',
			'turn-' || i
		from generate_series(1, 100000) i`, u.ID, learner)
	// Every 50 turns an archived conversation, as the app archives them.
	apptest.Exec(b, svc.Pool, `with segments as (
			select (row_number() over (order by id) - 1) / 50 as segment, id from conversation_turns
			where facilitator_id = $1::uuid),
		archives as (
			insert into conversation_history_archive (facilitator_id, learner_id, summary, conversation_turns, turn_count)
			select $1::uuid, $2::uuid, 'Fractions practice, part ' || s.segment,
				jsonb_agg(jsonb_build_object('id', t.client_turn_id, 'role', t.role, 'content', t.content, 'created_at', t.created_at) order by t.id),
				count(*)
			from segments s join conversation_turns t on t.facilitator_id = $1::uuid and t.id = s.id
			group by s.segment
			returning id, turn_count, summary)
		update conversation_turns t set archive_id = a.id
		from segments s, archives a
		where t.facilitator_id = $1::uuid and t.id = s.id and a.summary = 'Fractions practice, part ' || s.segment`, u.ID, learner)
	apptest.Exec(b, svc.Pool, `vacuum analyze conversation_turns`)
	return u
}

// download reads u's whole archive, checks that it ends whole, and returns
// its size, and the archive itself when keep is set.
func download(b *testing.B, svc *apptest.Service, u apptest.User, keep bool) (int64, []byte) {
	req, err := http.NewRequest(http.MethodGet, svc.URL+"/api/export", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+u.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	// Keeps the last line only, to check the archive ended whole.
	tail := &lastLine{}
	var whole bytes.Buffer
	to := io.Writer(tail)
	if keep {
		to = io.MultiWriter(tail, &whole)
	}
	n, err := io.Copy(to, res.Body)
	if err != nil || res.StatusCode != http.StatusOK || !bytes.HasPrefix(tail.line, []byte(`{"type":"end","records":`)) {
		b.Fatalf("export answered %d (%v), ending %s", res.StatusCode, err, tail.line)
	}
	return n, whole.Bytes()
}

// lastLine keeps the last whole line written to it.
type lastLine struct{ line, partial []byte }

func (l *lastLine) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	if i := bytes.LastIndexByte(l.partial, '\n'); i >= 0 {
		prev := bytes.LastIndexByte(l.partial[:i], '\n')
		l.line = append(l.line[:0], l.partial[prev+1:i]...)
		l.partial = append(l.partial[:0], l.partial[i+1:]...)
	}
	return len(p), nil
}

// resident reads a line of /proc/self/status in kB: VmRSS (now) or VmHWM
// (the peak since resetPeakResident).
func resident(b *testing.B, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := bytes.CutPrefix(s.Bytes(), []byte(field+":")); ok {
			kb, err := strconv.ParseInt(string(bytes.Fields(rest)[0]), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakResident makes VmHWM count from now (Linux 4.0 and later).
func resetPeakResident(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skip("cannot reset the peak resident memory: ", err)
	}
}
