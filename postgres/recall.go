package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"mentormemory/memory"
)

// The recall score of a memory, all parts in [0, 1]:
//
//	relevance = words                          without an embedding
//	          = 0.4·words + 0.6·meaning        with one
//	score     = 0.55·relevance + 0.20·importance + 0.10·confidence + 0.15·recency
//	          (+ 0.15 in deep retrieval when the memory's topic is in the message)
//
// words is the IDF-weighted sum of the message's stems found in the memory,
// over the learner's own memories (so a word in every memory counts little),
// squashed by x/(x+2); meaning is the cosine similarity of the embeddings;
// recency halves every 30 days since the fact was last learnt. The README
// documents the score.
const (
	weightRelevance  = 0.55
	weightImportance = 0.20
	weightConfidence = 0.10
	weightRecency    = 0.15
	meaningShare     = 0.6
	wordsSquash      = 2.0
	recencyHalfLife  = 30.0 // days
	topicBoost       = 0.15
)

// recallSQL ranks one learner's memories for a message and returns the best
// of each group. $1 facilitator, $2 learner key, $3..$7 the filter (see
// memoryFilterSQL), $8 message, $9 deep, $10 emotions, $11 embedding,
// $12 embedding model, $13 the weights (relevance, importance, confidence,
// recency, meaning share, words squash, recency half-life, topic boost),
// $14..$16 the group sizes (academic; personal, preference and context;
// emotional patterns).
const recallSQL = `
with params as (
	select $13::float8[] as w,
		$11::text::extensions.vector as vec,
		array(select distinct l from unnest(tsvector_to_array(to_tsvector('english', $8))) l) as stems,
		nullif(replace(plainto_tsquery('english', $8)::text, ' & ', ' | '), '')::tsquery as any_word
),
candidates as materialized (
	select m.*
	from public.learner_memories m
	where m.facilitator_id = $1::uuid
		and (coalesce(m.learner_id, '` + nilLearner + `'::uuid) = $2::uuid
			-- Deep retrieval also weighs what is known of the family in general.
			or ($9 and m.learner_id is null))
		and ` + memoryFilterSQL + `
),
hits as (
	select c.id, l.stem
	from candidates c, params p, unnest(tsvector_to_array(c.search_vector)) l(stem)
	where l.stem = any(p.stems)
),
document_frequency as (
	select stem, count(*) as n from hits group by stem
),
words as (
	select h.id, sum(ln(1 + (select count(*) from candidates)::float8 / df.n)) as raw
	from hits h join document_frequency df using (stem)
	group by h.id
),
scored as (
	select c.*,
		coalesce(w.raw / (w.raw + p.w[6]), 0) as word_score,
		case when c.embedding_model = $12 and p.vec is not null
			then greatest(0, 1 - (c.embedding operator(extensions.<=>) p.vec)) end as meaning_score,
		power(0.5, extract(epoch from now() - c.last_seen_at) / 86400.0 / p.w[7]) as recency,
		$9 and p.any_word is not null
			and to_tsvector('english', coalesce(c.metadata->>'topic', '') || ' ' || coalesce(c.metadata->>'next_topic', '')) @@ p.any_word
			as topical
	from candidates c cross join params p left join words w on w.id = c.id
),
ranked as (
	select s.*,
		p.w[1] * case when s.meaning_score is null then s.word_score
			else (1 - p.w[5]) * s.word_score + p.w[5] * s.meaning_score end
		+ p.w[2] * s.importance + p.w[3] * s.confidence + p.w[4] * s.recency
		+ case when s.topical then p.w[8] else 0 end as score
	from scored s cross join params p
),
grouped as (
	select r.*, row_number() over (partition by r.type order by
		case when r.type = 'context' then extract(epoch from r.created_at) else r.score end desc, r.id) as place
	from ranked r
)
select ` + memoryColumns + `, score, 'group' as part from grouped
where place <= case type when 'academic' then $14::int else $15::int end
union all
(select ` + memoryColumns + `, score, 'emotional' from ranked
	where $9 and cardinality($10::text[]) > 0
		and (lower(metadata->>'emotion') = any($10::text[]) or lower(metadata->>'trigger') = any($10::text[]))
	order by score desc, id
	limit $16::int)
order by score desc`

// Recall returns the memories that matter for the next reply, grouped.
func (s *Store) Recall(ctx context.Context, q memory.RecallQuery) (memory.Recall, error) {
	recall := memory.Recall{
		Academic: []memory.RecalledMemory{}, Personal: []memory.RecalledMemory{},
		Preferences: []memory.RecalledMemory{}, Context: []memory.RecalledMemory{},
		EmotionalPatterns: []memory.RecalledMemory{},
	}
	vector, model := vectorText(q.Embedding)
	emotions := q.Emotions
	if emotions == nil {
		emotions = []string{}
	}
	weights := []float64{weightRelevance, weightImportance, weightConfidence, weightRecency,
		meaningShare, wordsSquash, recencyHalfLife, topicBoost}
	err := s.read(ctx, q.LearnerID, func(b *pgx.Batch, me string) {
		args := append([]any{me, learnerKey(q.LearnerID)}, filterArgs(q.Filter)...)
		args = append(args, q.Message, q.Deep, emotions, vector, model, weights,
			memory.RecallAcademic, memory.RecallPersonal, memory.RecallEmotional)
		b.Queue(recallSQL, args...)
	}, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var part string
			var r memory.RecalledMemory
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
		return memory.Recall{}, err
	}
	// Continuity reads best in order: the latest thread first.
	slices.SortStableFunc(recall.Context, func(a, b memory.RecalledMemory) int {
		return b.CreatedAt.Compare(a.CreatedAt)
	})
	return recall, nil
}

// addRecalled files a recalled memory under its group; part is "emotional"
// for the emotional patterns deep retrieval adds.
func addRecalled(r *memory.Recall, part string, m memory.RecalledMemory) {
	if part == "emotional" {
		r.EmotionalPatterns = append(r.EmotionalPatterns, m)
		return
	}
	switch m.Type {
	case memory.Academic:
		r.Academic = append(r.Academic, m)
	case memory.Personal:
		r.Personal = append(r.Personal, m)
	case memory.Preference:
		r.Preferences = append(r.Preferences, m)
	case memory.Context:
		r.Context = append(r.Context, m)
	}
}
