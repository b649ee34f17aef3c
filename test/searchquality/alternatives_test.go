package searchquality

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Ranking experiments on private copies of the SQL in postgres/search.go.
// The real file is never touched: the copies run on the database the
// quality test loaded, in transactions set up as the service sets up its
// own (role authenticated, the caller's claims), and the first variant
// must reproduce the service's results question by question, which shows
// the copy is faithful. Only archived conversations are scored: after
// loading, the benchmark has no active ones.

// termsOptions varies how the question becomes weighted lexemes.
type termsOptions struct {
	correctionWeight float64
	// skipStopwords stops a question word that the english configuration
	// drops ("where", "about") from being "corrected" into a real word.
	skipStopwords bool
	// minSimilarity, when above pg_trgm's 0.3 threshold, only accepts a
	// correction that close to the typed word.
	minSimilarity float64
	noCorrections bool
	// tieBreak orders equally close corrections by the word itself, so
	// the choice no longer depends on the query plan.
	tieBreak      bool
	dropMetaWords bool
	// onlyUnmatched corrects only a word whose english stem matches no
	// conversation: "coaches" is not in the vocabulary, but "coach" is
	// said, so it needs no correction.
	onlyUnmatched bool
	// threshold replaces pg_trgm's similarity threshold (0.3) for the %
	// operator that finds candidates.
	threshold float64
	// editDistance takes corrections within one or two edits
	// (fuzzystrmatch's levenshtein) instead of by trigrams: trigrams miss
	// swapped letters in short words ("paino", "wodrs").
	editDistance bool
}

// The query-terms SQL of postgres/search.go with the options spliced in.
func termsSQL(o termsOptions) string {
	filter, sim, tie := "", "", ""
	if o.onlyUnmatched {
		filter = `and not exists (select 1 from public.conversation_history_archive a
			where a.facilitator_id = $1::uuid and a.search_vector @@ plainto_tsquery('english', w.word))`
	}
	if o.skipStopwords {
		filter += " and to_tsvector('english', w.word) <> ''::tsvector"
	}
	if o.tieBreak {
		tie = ", v.word"
	}
	if o.minSimilarity > 0 {
		sim = fmt.Sprintf("and extensions.similarity(v.word, w.word) >= %g", o.minSimilarity)
	}
	candidate := "v.word operator(extensions.%) w.word " + sim
	order := "v.word operator(extensions.<->) w.word" + tie
	if o.editDistance {
		// At most one edit in a short word, two in a longer one; nearest
		// first, then the most similar by trigrams, then alphabetical.
		candidate = "extensions.levenshtein(v.word, w.word) <= case when char_length(w.word) < 6 then 1 else 2 end"
		order = "extensions.levenshtein(v.word, w.word), v.word operator(extensions.<->) w.word, v.word"
	}
	corrections := "union all\n\tselect lexeme, $3::float8 from corrections c, unnest(to_tsvector('english', c.word))"
	if o.noCorrections {
		corrections = "union all select null, $3::float8 where false" // keeps $3 bound
	}
	return `
with words as (
	select distinct w.word
	from unnest(tsvector_to_array(to_tsvector('simple', $2))) as w(word)
	where char_length(w.word) between 4 and 40 and w.word ~ '^[[:alpha:]]+$' ` + filter + `
),
corrections as (
	select fix.word
	from words w
	cross join lateral (
		select v.word from public.search_vocabulary v
		where v.facilitator_id = $1::uuid and ` + candidate + `
		order by ` + order + `
		limit 1
	) fix
	where not exists (
		select 1 from public.search_vocabulary v
		where v.facilitator_id = $1::uuid and v.word = w.word)
),
terms as (
	select lexeme as term, 1.0::float8 as weight from unnest(to_tsvector('english', $2))
	` + corrections + `
)
select term, max(weight) from terms group by term order by max(weight) desc, term limit 32`
}

// sessionScoreSQL is the ranking of postgres/search.go, archive part,
// returning every scored conversation. $1 facilitator, $2 terms, $3
// weights, $4 summary weight, $5 k1, $6 b. dropSummary scores the turns
// only (the summary's lexemes are weight A).
func sessionScoreSQL(dropSummary bool) string {
	vector := "a.search_vector"
	if dropSummary {
		vector = "ts_filter(a.search_vector, '{b}')"
	}
	return bm25SQL(`
	select a.id as doc, a.id, `+vector+` as v
	from public.conversation_history_archive a
	where a.facilitator_id = $1::uuid
`, "cardinality(u.positions) + ($4::float8 - 1) * cardinality(array_positions(u.weights, 'A'))", "$5::float8", "$6::float8")
}

// turnScoreSQL scores each turn as its own BM25 document (the benchmark's
// reference scheme, with Postgres's stemming and stopwords) and gives a
// conversation its best turn's score. $1 facilitator, $2 terms, $3
// weights, $4 k1, $5 b.
var turnScoreSQL = bm25SQL(`
	select t.id as doc, public.archive_of(t) as id, t.content_vector as v
	from public.conversation_turns t
	where t.facilitator_id = $1::uuid and public.archive_of(t) is not null
`, "cardinality(u.positions)::float8", "$4::float8", "$5::float8")

// bm25SQL scores archived conversations by BM25 of the weighted query
// terms ($2 terms, $3 weights). docs selects the documents: each one's
// conversation (id), the document itself (doc: the whole conversation, or
// one of its turns) and its tsvector (v). tf is a term's frequency in a
// document, k1 and b the BM25 parameters. A conversation scores its best
// document.
func bm25SQL(docs, tf, k1, b string) string {
	return `
with terms as (
	select t.term, t.weight from unnest($2::text[], $3::float8[]) as t(term, weight)
),
query as (
	select string_agg(plainto_tsquery('simple', term)::text, ' | ')::tsquery as q from terms
),
docs as materialized (` + docs + `),
stats as (
	select count(*)::float8 as n, greatest(avg(length(v)), 1)::float8 as avgdl from docs
),
freqs as (
	select d.doc, d.id, length(d.v)::float8 as dl, t.term, t.weight, ` + tf + ` as tf
	from docs d
	cross join lateral unnest(d.v) as u
	join terms t on t.term = u.lexeme
	where d.v @@ (select q from query)
),
idf as (
	select term, ln(1 + ((select n from stats) - count(*) + 0.5) / (count(*) + 0.5)) as idf
	from freqs group by term
),
scores as (
	select f.doc, f.id, sum(f.weight * i.idf * f.tf * (` + k1 + ` + 1)
		/ (f.tf + ` + k1 + ` * (1 - ` + b + ` + ` + b + ` * f.dl / (select avgdl from stats)))) as score
	from freqs f join idf i using (term)
	group by f.doc, f.id
)
select id::text, max(score) from scores group by id`
}

// variant is one ranking to measure: how terms are made, and how a
// conversation's score is combined from a whole-session BM25 and a
// best-turn BM25.
type variant struct {
	name  string
	terms termsOptions
	// Whole-session BM25, as postgres/search.go (weight 0 leaves it out).
	session       float64
	summaryWeight float64
	dropSummary   bool
	sk1, sb       float64
	// Best-turn BM25 (weight 0 leaves it out).
	turn    float64
	tk1, tb float64
	// normalize scales each part by the question's best score of that
	// part before adding, so neither dominates by its range alone.
	normalize bool
}

// current is the ranking of postgres/search.go today.
var current = variant{
	name:  "copy of current SQL",
	terms: termsOptions{correctionWeight: 0.8}, session: 1, summaryWeight: 1.5, sk1: 1.2, sb: 0.75,
}

func (v variant) with(name string, change func(*variant)) variant {
	v.name = name
	change(&v)
	return v
}

// variants lists the experiments: each changes one thing from the current
// ranking; the last two combine the changes recommended in the report.
func variants() []variant {
	fixed := termsOptions{correctionWeight: 0.8, skipStopwords: true, tieBreak: true}
	turns := variant{terms: termsOptions{correctionWeight: 0.8}, turn: 1, tk1: 1.2, tb: 0.75}
	withSession := func(v *variant, weight float64) {
		v.session, v.summaryWeight, v.sk1, v.sb = weight, 1.5, 1.2, 0.75
	}
	return []variant{
		current,
		current.with("summary weight 1.0", func(v *variant) { v.summaryWeight = 1 }),
		current.with("summary weight 3.0", func(v *variant) { v.summaryWeight = 3 }),
		current.with("no summary in ranking", func(v *variant) { v.dropSummary, v.summaryWeight = true, 1 }),
		current.with("b = 0.3", func(v *variant) { v.sb = 0.3 }),
		current.with("b = 0.9", func(v *variant) { v.sb = 0.9 }),
		current.with("k1 = 0.6", func(v *variant) { v.sk1 = 0.6 }),
		current.with("k1 = 2.0", func(v *variant) { v.sk1 = 2 }),
		current.with("no typo correction", func(v *variant) { v.terms.noCorrections = true }),
		current.with("correction weight 0.4", func(v *variant) { v.terms.correctionWeight = 0.4 }),
		current.with("correction similarity >= 0.45", func(v *variant) { v.terms.minSimilarity = 0.45 }),
		current.with("correction tie-break by word", func(v *variant) { v.terms.tieBreak = true }),
		current.with("correction skips stopwords", func(v *variant) { v.terms.skipStopwords = true }),
		current.with("correct only stems matching nothing", func(v *variant) { v.terms.onlyUnmatched = true }),
		current.with("trigram threshold 0.2", func(v *variant) { v.terms.threshold = 0.2 }),
		current.with("corrections by edit distance", func(v *variant) { v.terms.editDistance = true }),
		current.with("edit distance, unmatched stems only", func(v *variant) {
			v.terms.editDistance, v.terms.onlyUnmatched, v.terms.skipStopwords = true, true, true
		}),
		current.with("meta words dropped", func(v *variant) { v.terms.dropMetaWords = true }),
		turns.with("best turn only", func(*variant) {}),
		turns.with("best turn + 0.3 session", func(v *variant) { withSession(v, 0.3) }),
		turns.with("best turn + 1.0 session", func(v *variant) { withSession(v, 1) }),
		turns.with("norm. best turn + 0.5 norm. session", func(v *variant) { withSession(v, 0.5); v.normalize = true }),
		current.with("no summary + corrections fixed", func(v *variant) {
			v.dropSummary, v.summaryWeight, v.terms = true, 1, fixed
		}),
		turns.with("same + best turn + 1.0 session", func(v *variant) {
			withSession(v, 1)
			v.dropSummary, v.summaryWeight, v.terms = true, 1, fixed
		}),
	}
}

// ranker runs the variants for one facilitator's questions.
type ranker struct {
	pool     *pgxpool.Pool
	me       string
	archived map[string]time.Time
	// asCaller runs as role authenticated with the caller's claims, as the
	// service does; otherwise as the superuser the test connects as.
	asCaller bool
}

// inTx runs fn in a transaction set up like the service's.
func (r *ranker) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if r.asCaller {
		if _, err := tx.Exec(ctx, `select set_config('role', 'authenticated', true),
			set_config('request.jwt.claims', json_build_object('sub', $1::text, 'role', 'authenticated')::text, true)`,
			r.me); err != nil {
			return err
		}
	}
	return fn(tx)
}

func queryTerms(ctx context.Context, tx pgx.Tx, me string, o termsOptions, text string) ([]string, []float64, error) {
	if o.threshold > 0 {
		if _, err := tx.Exec(ctx, `select set_config('pg_trgm.similarity_threshold', $1, true)`,
			fmt.Sprint(o.threshold)); err != nil {
			return nil, nil, err
		}
	}
	rows, err := tx.Query(ctx, termsSQL(o), me, text, o.correctionWeight)
	if err != nil {
		return nil, nil, err
	}
	var terms []string
	var weights []float64
	var term string
	var weight float64
	_, err = pgx.ForEachRow(rows, []any{&term, &weight}, func() error {
		if !o.dropMetaWords || !metaWords[term] {
			terms, weights = append(terms, term), append(weights, weight)
		}
		return nil
	})
	return terms, weights, err
}

// metaWords are the english stems of words that talk about the
// conversation rather than its content ("when did we talk about", "remind
// me what I said"): the dropMetaWords option removes them from a question.
var metaWords = set("rememb remind talk discuss mention tell told said say bring brought thing ago back")

func (r *ranker) terms(ctx context.Context, o termsOptions, text string) (terms []string, weights []float64, err error) {
	err = r.inTx(ctx, func(tx pgx.Tx) error {
		terms, weights, err = queryTerms(ctx, tx, r.me, o, text)
		return err
	})
	return terms, weights, err
}

func scores(ctx context.Context, tx pgx.Tx, sql string, args ...any) (map[string]float64, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	var id string
	var score float64
	_, err = pgx.ForEachRow(rows, []any{&id, &score}, func() error {
		out[id] = score
		return nil
	})
	return out, err
}

// rank returns the top archive rows of a question under a variant, ties
// broken like the service: newer first, then by id.
func (r *ranker) rank(ctx context.Context, v variant, text string) ([]string, error) {
	total := map[string]float64{}
	add := func(part map[string]float64, weight float64) {
		top := 0.0
		for _, s := range part {
			top = max(top, s)
		}
		for id, s := range part {
			if v.normalize && top > 0 {
				s /= top
			}
			total[id] += weight * s
		}
	}
	err := r.inTx(ctx, func(tx pgx.Tx) error {
		terms, weights, err := queryTerms(ctx, tx, r.me, v.terms, text)
		if err != nil || len(terms) == 0 {
			return err
		}
		if v.session > 0 {
			part, err := scores(ctx, tx, sessionScoreSQL(v.dropSummary), r.me, terms, weights, v.summaryWeight, v.sk1, v.sb)
			if err != nil {
				return err
			}
			add(part, v.session)
		}
		if v.turn > 0 {
			part, err := scores(ctx, tx, turnScoreSQL, r.me, terms, weights, v.tk1, v.tb)
			if err != nil {
				return err
			}
			add(part, v.turn)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(total))
	for id := range total {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(total[b], total[a]); c != 0 {
			return c
		}
		if c := r.archived[b].Compare(r.archived[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return ids[:min(depth, len(ids))], nil
}

// measureAlternatives scores every variant, adds its outcomes to results
// and logs them next to the service and the reference BM25.
func measureAlternatives(t *testing.T, pool *pgxpool.Pool, d *Dataset, accounts []*account,
	rowSession map[string]string, results map[string][]outcome) {
	t.Helper()
	ctx := context.Background()
	// For the edit-distance variants only, and only in this test's own
	// throwaway database: the migrations do not install fuzzystrmatch.
	if _, err := pool.Exec(ctx, `create extension if not exists fuzzystrmatch with schema extensions`); err != nil {
		t.Fatal(err)
	}
	archived := archivedAt(t, pool)

	vs := variants()
	var mu sync.Mutex
	outs := make([][]outcome, len(vs))
	for i := range outs {
		outs[i] = make([]outcome, len(d.Questions))
	}
	err := forEachAccount(accounts, func(a *account) error {
		// As the caller, like the service: the same role gives the same
		// plans, and the plan decides ties among equally close corrections.
		r := &ranker{pool: pool, me: a.id, archived: archived, asCaller: true}
		for qi, q := range d.Questions {
			if q.Facilitator != a.f.Key {
				continue
			}
			for vi, v := range vs {
				ids, err := r.rank(ctx, v, q.Text)
				if err != nil {
					return fmt.Errorf("%s %s: %w", v.name, q.ID, err)
				}
				top := make([]string, len(ids))
				for j, id := range ids {
					top[j] = rowSession[id]
				}
				mu.Lock()
				outs[vi][qi] = newOutcome(q, top)
				mu.Unlock()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for i, v := range vs {
		results[v.name] = outs[i]
		names = append(names, v.name)
	}
	// The copy must agree with the service question by question, or the
	// other numbers mean nothing. The one allowed exception is a question
	// with a correction tie: which of two equally close words the service
	// picks depends on the plan of that execution, so two runs may differ.
	// The copies rank by words alone: the questions that name a time,
	// which the service also ranks by that time, are left out.
	for i, o := range results[current.name] {
		s := results["service"][i]
		if slices.Equal(o.top, s.top) || apart(o.q.Kind) {
			continue
		}
		a := accountOf(accounts, o.q.Facilitator)
		r := &ranker{pool: pool, me: a.id, asCaller: true}
		var tied bool
		if err := r.inTx(ctx, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, correctionTieSQL, a.id, o.q.Text).Scan(&tied)
		}); err != nil {
			t.Fatal(err)
		}
		if !tied {
			t.Errorf("copy of the SQL disagrees with the service on %s %q: %v vs %v", o.q.ID, o.q.Text, o.top, s.top)
			continue
		}
		t.Logf("correction tie on %s %q: copy %v, service %v", o.q.ID, o.q.Text, o.top, s.top)
	}
	t.Logf("ranking alternatives (R@5 per kind, then overall):\n%s",
		compactTable(append([]string{"service", "bm25 (Go, turns)"}, names...), results))
	t.Logf("recall@5 of the alternatives by the length of the answer session:\n%s", bucketTable(d, names, results))
}

// compactTable shows one system per row: recall@5 per kind, then overall
// recall@1, recall@5 and MRR@5.
func compactTable(names []string, results map[string][]outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-36s", "system")
	_, kinds := summarize(results[names[0]])
	var shown []string
	for _, k := range Kinds {
		if kinds[k].n > 0 {
			shown = append(shown, k)
			fmt.Fprintf(&b, " %6.6s", k)
		}
	}
	fmt.Fprintf(&b, " | %6s %6s %6s\n", "R@1", "R@5", "MRR")
	for _, name := range names {
		all, kinds := summarize(results[name])
		fmt.Fprintf(&b, "%-36s", name)
		for _, k := range shown {
			fmt.Fprintf(&b, " %6.3f", kinds[k].r5)
		}
		fmt.Fprintf(&b, " | %6.3f %6.3f %6.3f\n", all.r1, all.r5, all.mrr5)
	}
	return b.String()
}

func accountOf(accounts []*account, key string) *account {
	for _, a := range accounts {
		if a.f.Key == key {
			return a
		}
	}
	panic("no account " + key)
}

// correctionTieSQL says whether some word of the question has two or more
// vocabulary words at the smallest trigram distance: the correction query
// of postgres/search.go ("order by distance limit 1") then picks one of
// them as the plan happens to produce them. $1 facilitator, $2 question.
const correctionTieSQL = `
with words as (
	select distinct w.word
	from unnest(tsvector_to_array(to_tsvector('simple', $2))) as w(word)
	where char_length(w.word) between 4 and 40 and w.word ~ '^[[:alpha:]]+$'
		and not exists (select 1 from public.search_vocabulary v
			where v.facilitator_id = $1::uuid and v.word = w.word)
),
candidates as (
	select w.word, v.word operator(extensions.<->) w.word as distance
	from words w
	join public.search_vocabulary v on v.facilitator_id = $1::uuid and v.word operator(extensions.%) w.word
)
select exists (
	select 1 from candidates c
	where c.distance = (select min(distance) from candidates m where m.word = c.word)
	group by c.word having count(*) > 1
)`

// archivedAt is when each archived conversation in the database was
// archived, by its id.
func archivedAt(t *testing.T, pool *pgxpool.Pool) map[string]time.Time {
	t.Helper()
	archived := map[string]time.Time{}
	rows, err := pool.Query(context.Background(), `select id::text, archived_at from public.conversation_history_archive`)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&id, &at}, func() error { archived[id] = at; return nil }); err != nil {
		t.Fatal(err)
	}
	return archived
}
