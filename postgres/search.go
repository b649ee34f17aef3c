package postgres

import (
	"context"
	"html"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// Ranking: Okapi BM25 over each conversation's search vector (summary and
// turns), with the summary's words counted summaryWeight times, so rare words
// outweigh common ones and a name or a word said in every conversation
// cannot dominate. Stemming and stopwords come from Postgres's english
// configuration; recency breaks ties. The README explains the choice and
// the measurements behind these constants.
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	summaryWeight = 1.5
	// A query word that matches nothing the facilitator ever wrote is taken
	// for a misspelling and replaced by their nearest word, counted a little
	// less than an exact match.
	correctionWeight = 0.8
	maxQueryTerms    = 32
	// Each correction searches the facilitator's vocabulary (at most
	// 20,000 words, migration 0014), so a query corrects only its few
	// longest unknown words: a query of a hundred made-up words costs three
	// lookups, not a hundred.
	maxCorrectedWords = 3
	// A conversation held in the time a question names gains this share of
	// the best score any conversation has for the question's words: enough
	// to rise above conversations that match the words about as well, not
	// enough to pass one that matches them much better (the README gives
	// the measurements).
	timeBoost = 0.5
	// At most about this many archived conversations are read to rank a
	// search (and as many more of the time a question names), however
	// long the facilitator's history: up to it, the ranking is exact BM25
	// (the README gives the measurements).
	candidateBudget = 200
)

// Highlight delimiters, from Unicode's private use area; they become <mark>
// after HTML escaping. Text could hold them too, so they are taken out of
// the text before the headline marks it, and every one left is a match's.
const (
	markStart = "\uE000"
	markStop  = "\uE001"
)

// searchSQL ranks the caller's conversations in one statement. $1
// facilitator, $2 search text, $3 correction weight, $4 learner (null for
// all), $5 include archive, $6 limit, $7 summary weight, $8 k1, $9 b,
// $10 most query terms, $11 most corrected words, $12 and $13 the start
// and end of the time the question names (null for none), $14 the time
// boost, $15 the candidate budget.
//
// The terms are the english stems of the text's words, plus, for each of
// the longest few words the facilitator never used, the stems of the
// closest word they did use.
// With no terms (only stopwords) the query is null and nothing matches.
var searchSQL = `
with words as (
	select distinct w.word
	from unnest(tsvector_to_array(to_tsvector('simple', $2))) as w(word)
	where char_length(w.word) between 4 and 40 and w.word ~ '^[[:alpha:]]+$'
		-- A stopword is no misspelling to correct.
		and to_tsvector('english', w.word) <> ''::tsvector
),
-- Words the facilitator never used, found first so the costlier search
-- for a correction runs only for them.
unknown_words as materialized (
	select w.word from words w
	where not exists (
		select 1 from public.search_vocabulary v
		where v.facilitator_id = $1::uuid and v.word = w.word)
	order by char_length(w.word) desc, w.word
	limit $11
),
-- Through the view of the caller's words (migration 0064), so that the
-- trigram index finds the close ones however large the vocabulary.
corrections as (
	select fix.word
	from unknown_words w
	cross join lateral (
		select v.word from private.caller_words v
		where v.facilitator_id = $1::uuid and v.word operator(extensions.%) w.word
		-- The word breaks ties, so equally close words resolve the same way
		-- every time.
		order by v.word operator(extensions.<->) w.word, v.word
		limit 1
	) fix
),
candidate_terms as (
	select lexeme as term, 1.0::float8 as weight from unnest(to_tsvector('english', $2))
	union all
	select lexeme, $3::float8 from corrections c, unnest(to_tsvector('english', c.word))
),
-- Each term's query is built once here, not once per conversation: the
-- lexeme alone, quoted, so that a hyphenated word's term ("parent-teach")
-- is the one lexeme the vectors and the archive's statistics hold, not
-- its parts.
terms as materialized (
	select term, ('''' || replace(replace(term, '\', '\\'), '''', '''''') || '''')::tsquery as term_query,
		max(weight) as weight
	from candidate_terms
	group by term order by max(weight) desc, term limit $10
),

query as materialized (
	select string_agg(term_query::text, ' | ')::tsquery as q from terms
),
-- The archive's statistics (migration 0031): for each term, how many of
-- the facilitator's archived conversations hold it, and for '' how many
-- there are and their lengths summed. A few index probes, however long
-- the history.
archive_stats as materialized (
	select s.term, s.conversations::float8 as conversations, s.lexemes::float8 as lexemes
	from public.archive_term_stats s
	where s.facilitator_id = $1::uuid and s.term = any(array(select term from terms) || ''::text)
),
-- The candidates in the archive, at most $15 of them (and as many more
-- of the time the question names), so that the cost of a search stays
-- flat as the history grows (migration 0032). While the facilitator has
-- at most $15 archived conversations, every one is a candidate and the
-- ranking is exact BM25. Past that, every conversation holding one of the
-- question's rarer terms, rarest first for as long as those terms are in
-- $15 conversations at most; or, when none of its terms is that rare,
-- conversations holding every one of them (two or more), as many as the
-- index gives first; both found by the index over the conversations'
-- words; then the newest others, up to $15 in all. So a conversation
-- holding only some of the question's common terms is a candidate when
-- it is among the newest. And the newest $15 whose last turn falls in the
-- time the question names (one that began before that time and ended
-- after it is not one for its time).
archive_size as materialized (
	select coalesce(max(conversations), 0) as n from archive_stats where term = ''
),
rare_terms as materialized (
	select string_agg(r.term_query::text, ' | ')::tsquery as q
	from (
		select t.term_query, sum(s.conversations) over (order by s.conversations, t.term) as reach
		from terms t join archive_stats s using (term)
	) r
	where r.reach <= $15
),
candidate_query as materialized (
	select case
		when not $5::boolean or (select n from archive_size) <= $15 then null
		when (select q from rare_terms) is not null then (select q from rare_terms)
		else (select string_agg(term_query::text, ' & ')::tsquery from terms having count(*) > 1)
	end as q
),
-- Through the view of the caller's archived conversations (migration
-- 0038), which the words' index serves under row-level security.
found as materialized (
	select w.id from private.caller_archive_words w
	where w.facilitator_id = $1::uuid and w.search_vector @@ (select q from candidate_query) and ($4::uuid is null or w.learner_id = $4::uuid)
	limit $15
),
archived as materialized (
	select id from found
	union
	(select a.id from public.conversation_history_archive a
	where $5::boolean and $4::uuid is null and a.facilitator_id = $1::uuid and a.id not in (select id from found)
	order by a.archived_at desc limit $15 - (select count(*) from found))
	union
	(select a.id from public.conversation_history_archive a
	where $5::boolean and a.facilitator_id = $1::uuid and a.learner_id = $4::uuid and a.id not in (select id from found)
	order by a.archived_at desc limit $15 - (select count(*) from found))
	union
	(select a.id from public.conversation_history_archive a
	where $5::boolean and a.facilitator_id = $1::uuid and ($4::uuid is null or a.learner_id = $4::uuid)
		and a.last_turn_at >= $12::timestamptz and a.last_turn_at < $13::timestamptz
	order by a.last_turn_at desc limit $15)
),
-- Every candidate conversation is read once, in place: its length and,
-- when it matches, each term's frequency, in the order of term. Nothing
-- here copies a search vector: each one is a few kilobytes, and copying a
-- hundred of them into a CTE's store and back was a tenth of a search. An
-- active conversation's vector is its summary's words, as the worker
-- stored them or, when the summary changed since, parsed here, and its
-- turns' words (migrations 0009 and 0057); one with neither has nothing to
-- be found by.
--
-- A term's frequency counts the summary's occurrences $7 times. For a
-- one-word query ts_rank_cd is the sum of the weights of its occurrences,
-- which reads the term straight from the vector instead of unnesting every
-- lexeme of every matching conversation.
--
-- A conversation is held in the time the question names when the span of
-- time its turns cover (migrations 0029 and 0030) meets it.
docs as materialized (
	select d.archived, d.id, d.date, length(d.v)::float8 as dl, d.in_window,
		case when d.v @@ (select q from query) then array(
			select ts_rank_cd(array[0.1, 0.1, 1 / $7::float8, 1]::float4[], d.v, t.term_query, 0) * $7::float8
			from terms t order by t.term)
		end as tfs
	from (
		select false as archived, c.id, c.updated_at as date,
			public.conversation_search_vector(c.summary, c.summary_vector, c.turns_vector) as v,
			coalesce(c.first_turn_at < $13::timestamptz and c.last_turn_at >= $12::timestamptz, false) as in_window
		from public.conversation_updates c
		where c.facilitator_id = $1::uuid and ($4::uuid is null or c.learner_id = $4::uuid)
			and (c.turns_vector <> ''::tsvector or c.summary <> '')
		union all
		select true, a.id, a.archived_at, a.search_vector,
			coalesce(a.first_turn_at < $13::timestamptz and a.last_turn_at >= $12::timestamptz, false)
		from archived k
		join public.conversation_history_archive a on a.facilitator_id = $1::uuid and a.id = k.id
	) d
),
-- BM25's statistics over all the facilitator's archived conversations
-- (whether or not the archive is searched, and whichever learner's) and
-- the active conversations searched: their number, average length, and
-- each term's document frequency.
stats as materialized (
	select n, greatest(lexemes / greatest(n, 1), 1)::float8 as avgdl
	from (
		select (select count(*) from docs where not archived)
				+ coalesce((select conversations from archive_stats where term = ''), 0) as n,
			(select coalesce(sum(dl), 0) from docs where not archived)
				+ coalesce((select lexemes from archive_stats where term = ''), 0) as lexemes
	) c
),
freqs as materialized (
	select d.archived, d.id, d.date, d.in_window, d.dl, f.term_no, f.tf
	from docs d cross join lateral unnest(d.tfs) with ordinality as f(tf, term_no)
	where d.tfs is not null and f.tf > 0
),
-- Each term's weight and inverse document frequency, numbered as in tfs.
term_weights as materialized (
	select w.term_no, w.weight, ln(1 + (s.n - w.df + 0.5) / (w.df + 0.5)) as idf
	from (
		select t.term_no, t.weight,
			coalesce((select a.conversations from archive_stats a where a.term = t.term), 0)
				+ (select count(*) from freqs f where not f.archived and f.term_no = t.term_no) as df
		from (select row_number() over (order by term) as term_no, term, weight from terms) t
	) w
	cross join stats s
	where w.df > 0
),
scores as materialized (
	select f.archived, f.id, f.date, f.in_window,
		sum(w.weight * w.idf * f.tf * ($8::float8 + 1)
			/ (f.tf + $8::float8 * (1 - $9::float8 + $9::float8 * f.dl / s.avgdl))) as score
	from freqs f join term_weights w using (term_no) cross join stats s
	group by f.archived, f.id, f.date, f.in_window
),
-- Ranked and cut to the limit before the costlier per-result work below.
-- A conversation held in the time the question names gains $14 times the
-- best score of the question's words, and is a result even when none of
-- them matches it (time_only); one held at another time can still win on
-- its words.
ranked as materialized (
	select c.archived, c.id, c.date, c.time_only,
		c.score + case when c.in_window
			then $14::float8 * (select coalesce(max(score), 0) from scores) else 0 end as score
	from (
		select s.archived, s.id, s.date, s.in_window, false as time_only, s.score from scores s
		union all
		select d.archived, d.id, d.date, true, true, 0 from docs d where d.in_window and d.tfs is null
	) c
	order by score desc, c.date desc, c.id
	limit $6
)
select r.id::text, d.learner_id::text, coalesce(d.summary, ''), d.turn_count, r.date, r.archived,
	r.score, d.first_turn_at, d.last_turn_at,
	coalesce(m.matches, '[]'::jsonb),
	case when r.time_only
		-- No word of the question is in it: the summary's start, which
		-- costs no parse of the text.
		then coalesce(substring(translate(coalesce(d.summary, ''), '` + markStart + markStop + `', '')
			from '^\s*(\S+(?:\s+\S+){0,29})'), '')
		else ts_headline('english', translate(coalesce(m.best, d.summary, ''), '` + markStart + markStop + `', ''), (select q from query),
			'StartSel=` + markStart + `, StopSel=` + markStop + `, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "')
	end
from ranked r
-- Each result's row, found by its key.
cross join lateral (
	select c.learner_id, c.summary, c.turn_count, c.first_turn_at, c.last_turn_at
	from public.conversation_updates c
	where not r.archived and c.facilitator_id = $1::uuid and c.id = r.id
	union all
	select a.learner_id, a.summary, a.turn_count, a.first_turn_at, a.last_turn_at
	from public.conversation_history_archive a
	where r.archived and a.facilitator_id = $1::uuid and a.id = r.id
) d
left join lateral (
	select jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', b.client_turn_id, 'role', b.role,
			'content', b.content, 'created_at', b.created_at)) order by b.rank desc, b.id) as matches,
		(array_agg(b.content order by b.rank desc, b.id))[1] as best
	from (
		select t.id, t.client_turn_id, t.role, t.content, t.created_at,
			ts_rank(t.content_vector, (select q from query)) as rank
		from public.conversation_history_archive a
		cross join lateral (` + archivedTurns("$1::uuid") + `) t
		where r.archived and not r.time_only and a.facilitator_id = $1::uuid and a.id = r.id
			and t.content_vector @@ (select q from query)
		union all
		select t.id, t.client_turn_id, t.role, t.content, t.created_at,
			ts_rank(t.content_vector, (select q from query))
		-- Through the view of the caller's turns (migration 0058), which the
		-- index of a conversation's turns serves under row-level security.
		from private.caller_turns t
		where not r.archived and not r.time_only and t.facilitator_id = $1::uuid
			and coalesce(t.learner_id, '` + nilLearner + `'::uuid) = coalesce(d.learner_id, '` + nilLearner + `'::uuid)
			and ` + activeTurn("t", "$1::uuid", "coalesce(d.learner_id, '"+nilLearner+"'::uuid)") + `
			and t.content_vector @@ (select q from query)
		order by rank desc, id
		limit 3
	) b
) m on true
order by r.score desc, r.date desc, r.id`

func (s *Store) Search(ctx context.Context, q mentor.SearchQuery) ([]mentor.SearchResult, error) {
	results := []mentor.SearchResult{}
	var start, end *time.Time
	if q.Window != nil {
		start, end = &q.Window.Start, &q.Window.End
	}
	err := s.read(ctx, q.LearnerID, func(b *pgx.Batch, me string) {
		b.Queue(searchSQL, me, q.Text, correctionWeight, q.LearnerID, q.IncludeArchive, q.Limit,
			summaryWeight, bm25K1, bm25B, maxQueryTerms, maxCorrectedWords, start, end, timeBoost, candidateBudget)
	}, func(br pgx.BatchResults) error {
		var err error
		results, err = collectRows(br, func(row pgx.CollectableRow) (mentor.SearchResult, error) {
			var r mentor.SearchResult
			var snippet string
			var matches []byte
			err := row.Scan(&r.ID, &r.LearnerID, &r.Summary, &r.TurnCount, &r.Date, &r.Archived,
				&r.Rank, &r.FirstTurnAt, &r.LastTurnAt, &matches, &snippet)
			r.Rank = math.Round(r.Rank*1e4) / 1e4
			r.LearnerContext = "General"
			if r.LearnerID != nil {
				r.LearnerContext = "Learner-specific"
			}
			r.Snippet = highlight(snippet)
			r.Matches = mentor.TurnsJSON(matches)
			return r, err
		})
		return err
	})
	return results, err
}

// highlight escapes the headline for HTML and turns the match delimiters
// into <mark> tags.
func highlight(headline string) string {
	escaped := html.EscapeString(headline)
	return strings.NewReplacer(markStart, "<mark>", markStop, "</mark>").Replace(escaped)
}
