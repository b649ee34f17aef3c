package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// The recall score of a memory, all parts in [0, 1]:
//
//	relevance = words                          without an embedding
//	          = 0.4·words + 0.6·meaning        with one
//	score     = 0.55·relevance + 0.20·importance + 0.10·confidence + 0.15·recency
//	          (+ 0.15 in deep retrieval when the memory's topic is in the message)
//
// words is the share of the message's word weight that the memory holds:
// a stem weighs ln(1 + n/k) when k of the learner's n memories hold it (so
// a word in every memory counts little, and one in none counts as in one),
// the learner's name and words that carry no topic are left out, and a long
// message, which may be about several things, weighs at most wordsEnough of
// the rarest words; meaning is the cosine similarity of the embeddings;
// recency halves every 30 days since the fact was last learnt. The README
// documents the score.
//
// A memory enters its group only when its relevance is at least
// minRelevanceScore; importance, confidence, recency and the topic rank
// what entered, but let nothing in (see recallSQL for the exceptions). The
// floor was measured on the labelled set of TestRecallQuality: from 0.24
// to 0.28 every labelled memory still comes first of its group, and 3 in 4
// to 4 in 5 of the memories that words and meaning bring are wanted; lower,
// memories that share a word of the message by chance come in (0.20: under
// 3 in 5); from 0.30 on, messages that name their memory in other words
// lose it, as meaning alone gives them about 0.6 × 0.5 (the cosine of a
// question and its answer with text-embedding-3 models). 0.25 leaves them
// the most room, as a real model's cosines vary.
const (
	weightRelevance   = 0.55
	weightImportance  = 0.20
	weightConfidence  = 0.10
	weightRecency     = 0.15
	meaningShare      = 0.6
	recencyHalfLife   = 30.0 // days
	topicBoost        = 0.15
	minRelevanceScore = 0.25
	wordsEnough       = 3.0
)

// inRecallScope matches the memories recall may return: the caller's ($1),
// of the learner keys in $2 (the learner, and in deep retrieval also the
// general memories), passing the filter ($3..$7).
const inRecallScope = `facilitator_id = $1::uuid
	and coalesce(learner_id, '` + nilLearner + `'::uuid) = any($2::uuid[])
	and ` + recallable + `
	and ` + memoryFilterSQL

// ofTheLearner matches the memories of the learner recall is for (its first
// learner key), not the general ones deep retrieval adds.
const ofTheLearner = `coalesce(learner_id, '` + nilLearner + `'::uuid) = ($2::uuid[])[1]`

// Light retrieval ranks only the memories that can enter a group: those
// the message's words are in (the query is a scalar subquery, computed
// once and usable by the words index, where a join with params would be
// neither), when the message has an embedding the lightNearest memories
// nearest to it in meaning, and when there is a filter by metadata those
// it picks. It runs on a follow-up in a live session, whose first message
// brought what a greeting needs, so nothing comes by importance or recency
// alone. Each part is in the statement only when it can bring something:
// with parts that bring nothing, Postgres kept no plan and planned every
// recall anew (1.2 ms each on the benchmark's data). Deep retrieval ranks
// every memory in scope, so a memory can also come up through a topic,
// and a session's first message through importance or recency. All read
// the candidates through the view of the caller's memories (migration
// 0059), which the words' index serves for the learner under row-level
// security.
var (
	lightWords = `select id from private.caller_memories
		where ` + inRecallScope + `
			-- Light retrieval has one learner key; said as a plain equality,
			-- the words index can use it.
			and ` + ofTheLearner + `
			and search_vector @@ (select any_word from params)`
	lightMeaning = `select near.id from (
		select id from private.caller_memories
		where ` + inRecallScope + ` and ` + ofTheLearner + ` and embedding_model = $12
		order by embedding operator(extensions.<=>) $11::text::extensions.vector
		limit ` + lightNearest + `) near`
	lightFiltered  = `select id from private.caller_memories where ` + inRecallScope + ` and ` + ofTheLearner
	deepCandidates = `select id from private.caller_memories where ` + inRecallScope
)

// lightNearest is how many memories light retrieval ranks by their
// meaning: as many as every group together holds.
var lightNearest = strconv.Itoa(mentor.RecallAcademic + 3*mentor.RecallPersonal)

// lightShape says which parts a light retrieval's candidates have besides
// its words.
type lightShape struct{ embedded, filtered bool }

// The statements, built once.
var (
	deepRecallSQL  = recallSQL(deepCandidates)
	lightRecallSQL = func() map[lightShape]string {
		statements := map[lightShape]string{}
		for _, embedded := range []bool{false, true} {
			for _, filtered := range []bool{false, true} {
				parts := []string{lightWords}
				if embedded {
					parts = append(parts, lightMeaning)
				}
				if filtered {
					parts = append(parts, lightFiltered)
				}
				statements[lightShape{embedded, filtered}] = recallSQL(strings.Join(parts, "\n\tunion\n\t"))
			}
		}
		return statements
	}()
)

// recallSQL ranks the candidate memories for a message and returns the best
// of each group. $1..$7 as in inRecallScope, $8 message, $9 deep,
// $10 emotions, $11 embedding, $12 embedding model, $13 the weights
// (relevance, importance, confidence, recency, meaning share, recency
// half-life, topic boost, relevance floor, words enough), $14..$16 the group
// sizes (academic; personal, preference and context; emotional patterns),
// $17 whether the message opens a session and $18 how many memories of
// each type it brings whatever it says, $19 the words that carry no topic,
// and $20 whether the filter is by metadata (see filteredByMetadata).
func recallSQL(candidateIDs string) string {
	return `
with message as materialized (
	-- The message's stems without the learner's name and the words that
	-- carry no topic ("get", "need", "still"): most memories name the
	-- learner, and any may hold such a word, so they say nothing about
	-- which memories matter. (Materialized: params reads it twice.)
	select array(select distinct l from unnest(tsvector_to_array(ts_delete(to_tsvector('english', $8),
		tsvector_to_array(to_tsvector('english', coalesce((select name from public.learners
			where facilitator_id = $1::uuid and id = any($2::uuid[]) limit 1), '') || ' ' || $19::text))))) l) as stems
),
params as (
	select $13::float8[] as w,
		$11::text::extensions.vector as vec,
		-- Each stem as a one-lexeme query, and any_word as any of them (null
		-- when there is none), each quoted so that no character in it is
		-- read as tsquery syntax.
		array(select ('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''')::tsquery
			from unnest(stems) l) as stem_queries,
		(select string_agg('''' || replace(replace(l, '\', '\\'), '''', '''''') || '''', ' | ')
			from unnest(stems) l)::tsquery as any_word
	from message
),
candidates as materialized (
	select m.id, m.learner_id, m.type, m.content, m.importance, m.confidence, m.metadata, m.source,
		m.session_id, m.source_turn_ids, m.mentions, m.status, m.superseded_by, m.needs_review,
		m.created_at, m.updated_at, m.last_seen_at, m.search_vector,
		case when m.embedding_model = $12 and p.vec is not null
			then greatest(0, 1 - (m.embedding operator(extensions.<=>) p.vec)) end as meaning_score
	from public.learner_memories m, params p
	where m.facilitator_id = $1::uuid and m.id in (` + candidateIDs + `)
),
-- Word statistics are over every memory in scope, so a word's weight does
-- not depend on the depth of retrieval: a stem held by k of the n memories
-- weighs ln(1 + n/k), and one no memory holds counts as held by one, the
-- rarest. Every memory holding one of the message's stems is a candidate,
-- light or deep, so the candidates are enough to count k.
scope_size as materialized (
	select count(*)::float8 as n from public.learner_memories where ` + inRecallScope + `
),
stem_weights as materialized (
	select q.stem_query, ln(1 + s.n / greatest(count(c.id), 1)) as idf
	from params p
	cross join scope_size s
	cross join unnest(p.stem_queries) q(stem_query)
	left join candidates c on c.search_vector @@ q.stem_query
	group by q.stem_query, s.n
),
-- Each memory's words score: the share of the message's word weight it
-- holds, so a word of a message about other things counts little. A long
-- message may be about several things, and a memory need hold only one:
-- the weight of w[9] of the rarest words is enough for a full score.
weighed as materialized (
	select c.*,
		least(1, coalesce((select sum(sw.idf) from stem_weights sw where c.search_vector @@ sw.stem_query)
			/ least((select sum(idf) from stem_weights), p.w[9] * ln(1 + s.n)), 0)) as word_score
	from candidates c cross join params p cross join scope_size s
),
scored as (
	select c.*,
		power(0.5, extract(epoch from now() - c.last_seen_at) / 86400.0 / p.w[6]) as recency,
		$9 and p.any_word is not null
			and to_tsvector('english', coalesce(c.metadata->>'topic', '') || ' ' || coalesce(c.metadata->>'next_topic', '')) @@ p.any_word
			as topical
	from weighed c cross join params p
),
judged as (
	select s.*,
		case when s.meaning_score is null then s.word_score
			else (1 - p.w[5]) * s.word_score + p.w[5] * s.meaning_score end as relevance
	from scored s cross join params p
),
ranked as (
	select j.*,
		p.w[1] * j.relevance + p.w[2] * j.importance + p.w[3] * public.memory_confidence_now(j.confidence, j.last_seen_at)
		+ p.w[4] * j.recency
		+ case when j.topical then p.w[7] else 0 end as score
	from judged j cross join params p
),
-- What a session's first message brings whatever it says: the learner's
-- $18 most important memories of each type, and of continuity the newest.
-- Read only then (the indexes point at them).
session_start as (
	select best.id from unnest(array['academic', 'personal', 'preference']) as t(kind)
	cross join lateral (
		select id from public.learner_memories
		where ` + inRecallScope + ` and ` + ofTheLearner + ` and type = t.kind
		order by importance desc, last_seen_at desc
		limit $18::int) best
	union all
	select newest.id from (
		select id from public.learner_memories
		where ` + inRecallScope + ` and ` + ofTheLearner + ` and type = 'context'
		order by created_at desc
		limit $18::int) newest
),
-- A memory enters its group when the message earns it: its relevance
-- passes the floor, so a message about one thing brings nothing else, and
-- a group may stay empty. Two exceptions: a filter by metadata has chosen
-- the memories already; and a session's first message, as the mentor
-- greets the learner before any topic is named ("How's Max?") and picks up
-- where things stood, brings the learner's most important memories of
-- each type, and the newest continuity, whatever it says.
grouped as (
	select r.*, row_number() over (partition by r.type order by r.score desc, r.id) as place
	from ranked r cross join params p
	where r.relevance >= p.w[8] or $20::bool
		or ($17::bool and r.id = any(array(select id from session_start)))
)
select ` + memoryColumns + `, score, 'group' as part from grouped
where place <= case type when 'academic' then $14::int else $15::int end
union all
(select ` + memoryColumns + `, score, 'emotional' from ranked
	where $9 and cardinality($10::text[]) > 0
		and (lower(metadata->>'emotion') = any($10::text[]) or lower(metadata->>'trigger') = any($10::text[]))
		-- How the learner responds to the feeling, not any fact that was
		-- learnt with it: a preference about an emotional response, or one
		-- learnt more than once, a pattern the learner has confirmed.
		and type = 'preference'
		and (lower(metadata->>'category') = 'emotional_response' or metadata->>'trigger' is not null
			or metadata->>'response' is not null or mentions > 1)
	order by score desc, id
	limit $16::int)
order by score desc`
}

// Recall returns the memories that matter for the next reply, grouped.
func (s *Store) Recall(ctx context.Context, q mentor.RecallQuery) (mentor.Recall, error) {
	recall := mentor.Recall{
		Academic: []mentor.RecalledMemory{}, Personal: []mentor.RecalledMemory{},
		Preferences: []mentor.RecalledMemory{}, Context: []mentor.RecalledMemory{},
		EmotionalPatterns: []mentor.RecalledMemory{},
	}
	vector, model := vectorText(q.Embedding)
	emotions := q.Emotions
	if emotions == nil {
		emotions = []string{}
	}
	weights := []float64{weightRelevance, weightImportance, weightConfidence, weightRecency,
		meaningShare, recencyHalfLife, topicBoost, minRelevanceScore, wordsEnough}
	keys := []string{learnerKey(q.LearnerID)}
	filtered := filteredByMetadata(q.Filter)
	statement := lightRecallSQL[lightShape{embedded: vector != nil, filtered: filtered}]
	if q.Deep {
		statement = deepRecallSQL
		// Deep retrieval also weighs what is known of the family in general.
		if q.LearnerID != nil {
			keys = append(keys, nilLearner)
		}
	}
	err := s.read(ctx, q.LearnerID, func(b *pgx.Batch, me string) {
		args := append([]any{me, keys}, filterArgs(q.Filter)...)
		args = append(args, q.Message, q.Deep, emotions, vector, model, weights,
			mentor.RecallAcademic, mentor.RecallPersonal, mentor.RecallEmotional,
			q.SessionStart, mentor.RecallSessionStart, mentor.TopicLessWords, filtered)
		b.Queue(statement, args...)
	}, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var part string
			var r mentor.RecalledMemory
			m, err := scanMemory(rows, &r.Score, &part)
			if err != nil {
				return err
			}
			r.LearnerMemory = m
			r.Score = roundScore(r.Score)
			addRecalled(&recall, part, r)
		}
		return rows.Err()
	})
	if err != nil {
		return mentor.Recall{}, err
	}
	// Continuity reads best in order: the latest thread first.
	slices.SortStableFunc(recall.Context, func(a, b mentor.RecalledMemory) int {
		return b.CreatedAt.Compare(a.CreatedAt)
	})
	return recall, nil
}

// filteredByMetadata says whether f filters by what was recorded with the
// memories (a feeling, a valence, a category or a topic): such a filter
// says itself what the caller wants, so what passes it has earned its
// place, and the message only ranks it.
func filteredByMetadata(f mentor.MemoryFilter) bool {
	return f.Emotion != "" || f.Valence != "" || f.Category != "" || f.Topic != ""
}

// addRecalled files a recalled memory under its group; part is "emotional"
// for the emotional patterns deep retrieval adds.
func addRecalled(r *mentor.Recall, part string, m mentor.RecalledMemory) {
	if part == "emotional" {
		r.EmotionalPatterns = append(r.EmotionalPatterns, m)
		return
	}
	switch m.Type {
	case mentor.Academic:
		r.Academic = append(r.Academic, m)
	case mentor.Personal:
		r.Personal = append(r.Personal, m)
	case mentor.Preference:
		r.Preferences = append(r.Preferences, m)
	case mentor.Context:
		r.Context = append(r.Context, m)
	}
}
