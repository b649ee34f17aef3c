package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// Near-duplicates: a new memory this close to a known one of the same learner
// and type is the same fact said again, and reinforces it instead of being
// stored twice. Trigram similarity catches rewordings of the same words;
// the embedding, when there is one, catches the same meaning in other words.
const (
	duplicateTrigram = 0.55
	duplicateCosine  = 0.90
	// A repeat moves confidence this share of the way to certainty (scaled
	// by the repeat's own confidence), and raises importance a little.
	reinforceConfidence = 0.5
	reinforceImportance = 0.05
)

const memoryColumns = `id::text, learner_id::text, type, content, importance, confidence, metadata,
	source, session_id::text, source_turn_ids, mentions, created_at, updated_at, last_seen_at`

func scanMemory(row pgx.Row, extra ...any) (mentor.LearnerMemory, error) {
	var m mentor.LearnerMemory
	var metadata []byte
	var importance, confidence float32
	dest := append([]any{&m.ID, &m.LearnerID, &m.Type, &m.Content, &importance, &confidence, &metadata,
		&m.Source, &m.SessionID, &m.SourceTurnIDs, &m.Mentions, &m.CreatedAt, &m.UpdatedAt, &m.LastSeenAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return m, err
	}
	// real columns: round away float32 noise (0.7 is stored as 0.69999999).
	m.Importance = roundScore(float64(importance))
	m.Confidence = roundScore(float64(confidence))
	if m.SourceTurnIDs == nil {
		m.SourceTurnIDs = []int64{}
	}
	return m, json.Unmarshal(metadata, &m.Metadata)
}

func roundScore(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 4, 64), 64)
	return v
}

// vectorText is an embedding in pgvector's text form, or nil.
func vectorText(e *mentor.Embedding) (vector, model *string) {
	if e == nil || len(e.Vector) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, f := range e.Vector {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
	}
	b.WriteByte(']')
	text := b.String()
	return &text, &e.Model
}

// findDuplicateSQL finds the known memory a new one repeats, locking it for
// the merge. $1 facilitator, $2 learner key, $3 type, $4 content,
// $5 embedding, $6 embedding model, $7 trigram and $8 cosine thresholds.
const findDuplicateSQL = `
with known as (
	select id, created_at,
		extensions.similarity(content, $4) as words,
		case when embedding_model = $6 and $5::text is not null
			then 1 - (embedding operator(extensions.<=>) $5::text::extensions.vector) else 0 end as meaning
	from public.learner_memories
	where ` + sameConversation + ` and type = $3
)
select id from known
where words >= $7 or meaning >= $8
order by greatest(words, meaning) desc, created_at
limit 1`

// SaveMemory stores a memory, or reinforces the known one it repeats.
func (s *Store) SaveMemory(ctx context.Context, m mentor.NewMemory) (mentor.Saved, error) {
	var saved mentor.Saved
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var err error
		saved, err = saveMemory(ctx, tx, me, m)
		return err
	})
	return saved, err
}

func saveMemory(ctx context.Context, tx pgx.Tx, me string, m mentor.NewMemory) (mentor.Saved, error) {
	if _, err := requireLearner(ctx, tx, me, m.LearnerID); err != nil {
		return mentor.Saved{}, err
	}
	if m.Metadata == nil {
		m.Metadata = mentor.Metadata{}
	}
	metadata, err := json.Marshal(m.Metadata)
	if err != nil {
		return mentor.Saved{}, err
	}
	turnIDs := m.SourceTurnIDs
	if turnIDs == nil {
		turnIDs = []int64{}
	}
	vector, model := vectorText(m.Embedding)

	// Two saves of the same fact at once must not both insert it: saves to
	// one learner's memories take turns.
	if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock(hashtextextended($1 || $2, 0))`, me, learnerKey(m.LearnerID)); err != nil {
		return mentor.Saved{}, err
	}
	var duplicateID string
	err = tx.QueryRow(ctx, findDuplicateSQL, me, learnerKey(m.LearnerID), m.Type, m.Content, vector, model,
		duplicateTrigram, duplicateCosine).Scan(&duplicateID)
	switch {
	case err == nil:
		merged, err := scanMemory(tx.QueryRow(ctx, `
			update public.learner_memories set
				mentions = mentions + 1,
				confidence = least(1, confidence + (1 - confidence) * $3 * $6),
				importance = least(1, greatest(importance, $4) + $7),
				-- Learnt metadata joins what is there while the memory keeps
				-- within its 16 keys, and the memory names its latest 100
				-- source turns (the limits migration 0013 holds it to).
				metadata = case when (select count(*) from jsonb_object_keys(metadata || $5::jsonb)) <= 16
					then metadata || $5::jsonb else metadata end,
				source_turn_ids = array(select id from (
					select distinct unnest(source_turn_ids || $8::bigint[]) as id order by id desc limit 100) latest
					order by id),
				last_seen_at = now(), updated_at = now()
			where facilitator_id = $1::uuid and id = $2::uuid
			returning `+memoryColumns,
			me, duplicateID, m.Confidence, m.Importance, string(metadata), reinforceConfidence, reinforceImportance, turnIDs))
		return mentor.Saved{Memory: merged, Merged: true}, err
	case !errors.Is(err, pgx.ErrNoRows):
		return mentor.Saved{}, err
	}
	created, err := scanMemory(tx.QueryRow(ctx, `
		insert into public.learner_memories (facilitator_id, learner_id, type, content, importance, confidence,
			metadata, source, session_id, source_turn_ids, embedding, embedding_model)
		values ($1::uuid, $2::uuid, $3, $4, $5, $6, $7::jsonb, $8, $9::uuid, $10, $11::text::extensions.vector, $12)
		returning `+memoryColumns,
		me, m.LearnerID, m.Type, m.Content, m.Importance, m.Confidence, string(metadata), m.Source, m.SessionID, turnIDs, vector, model))
	return mentor.Saved{Memory: created}, err
}

// UpdateMemory applies a correction. A changed content drops the old
// embedding unless the patch brings a new one: a stale vector would recall
// the memory for what it used to say.
func (s *Store) UpdateMemory(ctx context.Context, id string, p mentor.MemoryPatch) (mentor.LearnerMemory, error) {
	var updated mentor.LearnerMemory
	var metadata *string
	if p.Metadata != nil {
		encoded, err := json.Marshal(p.Metadata)
		if err != nil {
			return updated, err
		}
		metadata = new(string(encoded))
	}
	vector, model := vectorText(p.Embedding)
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		var err error
		updated, err = scanMemory(tx.QueryRow(ctx, `
			update public.learner_memories set
				type = coalesce($3, type),
				content = coalesce($4, content),
				importance = coalesce($5, importance),
				confidence = coalesce($6, confidence),
				metadata = coalesce($7::jsonb, metadata),
				embedding = case when $8::text is not null then $8::text::extensions.vector
					when $4 is not null and $4 <> content then null else embedding end,
				embedding_model = case when $8::text is not null then $9
					when $4 is not null and $4 <> content then null else embedding_model end,
				updated_at = now()
			where facilitator_id = $1::uuid and id = $2::uuid
			returning `+memoryColumns,
			me, id, p.Type, p.Content, p.Importance, p.Confidence, metadata, vector, model))
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
		}
		return err
	})
	return updated, err
}

// DeleteMemory forgets a memory for good.
func (s *Store) DeleteMemory(ctx context.Context, id string) error {
	return s.inTx(ctx, func(tx pgx.Tx, me string) error {
		tag, err := tx.Exec(ctx, `delete from public.learner_memories where facilitator_id = $1::uuid and id = $2::uuid`, me, id)
		if err == nil && tag.RowsAffected() == 0 {
			return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
		}
		return err
	})
}

// memoryFilterSQL narrows memories by type and metadata; $3..$7 are the
// filter's type, emotion, valence, category and topic, lower-cased; an empty
// value matches everything.
const memoryFilterSQL = `($3 = '' or type = $3)
	and ($4 = '' or lower(metadata->>'emotion') = $4)
	and ($5 = '' or lower(metadata->>'valence') = $5)
	and ($6 = '' or lower(metadata->>'category') = $6)
	and ($7 = '' or lower(metadata->>'topic') = $7)`

func filterArgs(f mentor.MemoryFilter) []any {
	return []any{string(f.Type), f.Emotion, f.Valence, f.Category, f.Topic}
}

// ListMemories returns the caller's memories, newest first: those of one
// learner, the general ones (learner nil with all false), or every one.
func (s *Store) ListMemories(ctx context.Context, q mentor.ListQuery) ([]mentor.LearnerMemory, error) {
	memories := []mentor.LearnerMemory{}
	err := s.read(ctx, q.LearnerID, func(b *pgx.Batch, me string) {
		args := append([]any{me, learnerKey(q.LearnerID)}, filterArgs(q.Filter)...)
		args = append(args, q.All, q.Limit, q.Offset)
		b.Queue(`select `+memoryColumns+` from public.learner_memories
			where facilitator_id = $1::uuid
				and ($8 or coalesce(learner_id, '`+nilLearner+`'::uuid) = $2::uuid)
				and `+memoryFilterSQL+`
			order by created_at desc, id
			limit $9 offset $10`, args...)
	}, func(br pgx.BatchResults) error {
		var err error
		memories, err = collectRows(br, func(row pgx.CollectableRow) (mentor.LearnerMemory, error) {
			return scanMemory(row)
		})
		return err
	})
	return memories, err
}
