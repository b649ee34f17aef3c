package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
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
	// A repeat raises importance a little.
	reinforceImportance = 0.05
)

// recallable matches the memories recall and openings may bring up: current
// ones (not superseded, expired or resolved) whose confidence has not
// decayed to mentor.ConfidenceFloor (0.3), the mark of a memory long
// unconfirmed. The others stay listed and in their history.
const recallable = `status = 'current' and public.memory_confidence_now(confidence, last_seen_at) > 0.3::real`

// memoryColumns reads a stored memory: its confidence as of now, decayed
// since it was last confirmed (migration 0019).
const memoryColumns = `id::text, learner_id::text, type, content, importance,
	public.memory_confidence_now(confidence, last_seen_at), metadata, source, session_id::text, source_turn_ids,
	mentions, status, superseded_by::text, needs_review, created_at, updated_at, last_seen_at`

func scanMemory(row pgx.Row, extra ...any) (mentor.LearnerMemory, error) {
	var m mentor.LearnerMemory
	var metadata []byte
	var importance, confidence float32
	dest := append([]any{&m.ID, &m.LearnerID, &m.Type, &m.Content, &importance, &confidence, &metadata,
		&m.Source, &m.SessionID, &m.SourceTurnIDs, &m.Mentions, &m.Status, &m.SupersededBy, &m.NeedsReview,
		&m.CreatedAt, &m.UpdatedAt, &m.LastSeenAt}, extra...)
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

// findSimilarSQL finds the current memory a new one repeats or
// contradicts, the closest. $1 facilitator,
// $2 learner key, $3 type, $4 content, $5 embedding, $6 embedding model,
// $7 trigram and $8 cosine thresholds.
const findSimilarSQL = `
with known as (
	select id, content, created_at,
		extensions.similarity(content, $4) as words,
		case when embedding_model = $6 and $5::text is not null
			then 1 - (embedding operator(extensions.<=>) $5::text::extensions.vector) else 0 end as meaning
	from public.learner_memories
	where ` + sameConversation + ` and type = $3 and status = 'current'
)
select id::text, content from known
where words >= $7 or meaning >= $8
order by greatest(words, meaning) desc, created_at
limit 1`

// recordChangeSQL ends a statement that changes memories: it appends to
// their history the change $2 made by $3 (in job $4; $5 is the memory that
// superseded them), from the rows before (CTE before: id, content,
// confidence) and after (CTE changed), and returns the changed memories.
// $1 is the facilitator. The change and its record are one statement, so
// neither is ever without the other.
//
// The history's insert returns what it wrote, which nothing reads: Citus
// runs an INSERT within a WITH in steps, and writes the rows of one that
// returns nothing with COPY, which row-level security refuses; with
// RETURNING it writes them with an INSERT.
const recordChangeSQL = `
history as (
	insert into public.memory_history (facilitator_id, memory_id, learner_id, change, actor, job_id, session_id,
		related_memory_id, content_before, content_after, confidence_before, confidence_after, status_after)
	select $1::uuid, c.id, c.learner_id, $2, $3, $4::bigint, c.session_id, $5::uuid, b.content, c.content, b.confidence,
		public.memory_confidence_now(c.confidence, c.last_seen_at), c.status
	from changed c left join before b on b.id = c.id
	returning id
)
select ` + memoryColumns + ` from changed`

// relearntSQL is a step of a statement that corrects a memory (CTEs before
// and changed, $1 the facilitator): where the session it was learnt in
// lists its old text under what was learnt, the list says the corrected
// text instead, so the end of the session shows what is known now.
const relearntSQL = `
relearnt as (
	update public.mentor_sessions s set closing = jsonb_set(s.closing, '{new_memories}', (
		select jsonb_agg(case when x.e = to_jsonb(b.content) then to_jsonb(c.content) else x.e end order by x.i)
		from jsonb_array_elements(s.closing->'new_memories') with ordinality as x(e, i)))
	from before b join changed c on c.id = b.id
	where s.facilitator_id = $1::uuid and s.id = c.session_id and c.content <> b.content
		and jsonb_typeof(s.closing->'new_memories') = 'array' and s.closing->'new_memories' ? b.content
),`

// correctedAtSQL is when a person last corrected the memory of the row
// being read (from public.learner_memories): the facilitator in the page
// or API, or a correction they confirmed in the chat. Null when never.
const correctedAtSQL = `(select max(h.created_at) from public.memory_history h
	where h.facilitator_id = learner_memories.facilitator_id and h.memory_id = learner_memories.id
		and h.change = '` + mentor.ChangeCorrected + `' and h.actor in ('` + mentor.ActorFacilitator + `', '` + mentor.ActorChat + `'))`

// nothingBefore is the before of a memory being created.
const nothingBefore = `before as (select null::uuid as id, null::text as content, null::real as confidence limit 0),`

// memoryBefore is the before of the memory $6 of facilitator $1, locked for
// its change; extra narrows which memory may change.
func memoryBefore(extra string) string {
	return `before as (
		select id, content, public.memory_confidence_now(confidence, last_seen_at) as confidence
		from public.learner_memories
		where facilitator_id = $1::uuid and id = $6::uuid ` + extra + `
		for update
	),`
}

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

// saveMemory stores a new memory, unless it repeats a current one, which is
// then reinforced. A new memory that contradicts a current one (the
// extractor said it replaces it, or it is a near-duplicate said the other
// way round: "no longer", "not") supersedes it. Every change goes to the
// memories' history in the same statement as the change.
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
	actor := mentor.ActorFacilitator
	if m.Source == mentor.SourceExtracted {
		actor = mentor.ActorExtraction
	}

	// Two saves of the same fact at once must not both insert it: saves to
	// one learner's memories take turns.
	if err := lockLearnerMemories(ctx, tx, me, learnerKey(m.LearnerID)); err != nil {
		return mentor.Saved{}, err
	}
	replaced := m.Replaces
	if replaced == nil {
		var similarID, similarContent string
		err := tx.QueryRow(ctx, findSimilarSQL, me, learnerKey(m.LearnerID), m.Type, m.Content, vector, model,
			duplicateTrigram, duplicateCosine).Scan(&similarID, &similarContent)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return mentor.Saved{}, err
		case mentor.Contradicts(m.Content, similarContent):
			// "Emma no longer struggles with long division" is not a repeat
			// of "Emma struggles with long division": it replaces it.
			replaced = &similarID
		default:
			merged, err := scanMemory(tx.QueryRow(ctx, `with `+memoryBefore(`and status = 'current'`)+`
				changed as (
					update public.learner_memories m set
						mentions = mentions + 1,
						-- A repeat confirms the memory: its confidence as of now
						-- rises to the repeat's (mentor.RepeatConfidence for one
						-- learnt again), and its decay starts again.
						confidence = greatest(b.confidence, $7),
						importance = least(1, greatest(importance, $8) + $9),
						-- Learnt metadata joins what is there while the memory
						-- keeps within its 16 keys, and the memory names its latest
						-- 100 source turns (the limits migration 0013 holds it to).
						metadata = case when (select count(*) from jsonb_object_keys(m.metadata || $10::jsonb)) <= 16
							then m.metadata || $10::jsonb else m.metadata end,
						source_turn_ids = array(select id from (
							select distinct unnest(source_turn_ids || $11::bigint[]) as id order by id desc limit 100) latest
							order by id),
						last_seen_at = now(), updated_at = now()
					from before b
					where m.facilitator_id = $1::uuid and m.id = b.id
					returning m.*
				),`+recordChangeSQL,
				me, mentor.ChangeMerged, actor, m.JobID, nil,
				similarID, repeatConfidence(m), m.Importance, reinforceImportance, string(metadata), turnIDs))
			return mentor.Saved{Memory: merged, Merged: true}, err
		}
	}

	id := uuid.NewString()
	created, err := scanMemory(tx.QueryRow(ctx, `with `+nothingBefore+`
		changed as (
			insert into public.learner_memories (id, facilitator_id, learner_id, type, content, importance, confidence,
				metadata, source, session_id, source_turn_ids, embedding, embedding_model)
			values ($6::uuid, $1::uuid, $7::uuid, $8, $9, $10, $11, $12::jsonb, $13, $14::uuid, $15, $16::text::extensions.vector, $17)
			returning *
		),`+recordChangeSQL,
		me, mentor.ChangeCreated, actor, m.JobID, nil,
		id, m.LearnerID, m.Type, m.Content, m.Importance, startConfidence(m), string(metadata), m.Source, m.SessionID, turnIDs, vector, model))
	if err != nil || replaced == nil {
		return mentor.Saved{Memory: created}, err
	}
	superseded, err := supersede(ctx, tx, me, m.LearnerID, *replaced, created.ID, actor, m.JobID)
	if err != nil || !superseded {
		return mentor.Saved{Memory: created}, err
	}
	return mentor.Saved{Memory: created, Superseded: replaced}, nil
}

// startConfidence is a new memory's confidence: a person's as given, the
// extractor's mentor.ExtractedConfidence whatever the model said.
func startConfidence(m mentor.NewMemory) float64 {
	if m.Source == mentor.SourceExtracted {
		return mentor.ExtractedConfidence
	}
	return m.Confidence
}

// repeatConfidence is what a repeat raises a memory's confidence to.
func repeatConfidence(m mentor.NewMemory) float64 {
	if m.Source == mentor.SourceExtracted {
		return mentor.RepeatConfidence
	}
	return m.Confidence
}

// supersede marks the current memory old of the learner as replaced by
// the memory by: its confidence drops to mentor.SupersededConfidence and it
// is flagged for a person's review. It reports false when old is not a
// current memory of the learner (the extractor named one that changed
// meanwhile), which leaves it alone.
func supersede(ctx context.Context, tx pgx.Tx, me string, learnerID *string, old, by, actor string, jobID *int64) (bool, error) {
	_, err := scanMemory(tx.QueryRow(ctx, `with `+memoryBefore(`and status = 'current' and id <> $5::uuid
			and coalesce(learner_id, '`+nilLearner+`'::uuid) = $7::uuid`)+`
		changed as (
			update public.learner_memories m set
				status = 'superseded', superseded_by = $5::uuid, needs_review = true,
				confidence = least(b.confidence, $8), updated_at = now()
			from before b
			where m.facilitator_id = $1::uuid and m.id = b.id
			returning m.*
		),`+recordChangeSQL,
		me, mentor.ChangeSuperseded, actor, jobID, by,
		old, learnerKey(learnerID), mentor.SupersededConfidence))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// UpdateMemory applies a person's correction or confirmation. A changed
// content drops the old embedding unless the patch brings a new one: a
// stale vector would recall the memory for what it used to say. What a
// person says (a new content, a confidence, a confirmation) is as of now:
// the confidence becomes theirs (mentor.PersonConfidence unless given) and
// its decay starts again. A confirmed memory is current again, reviewed.
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
		updated, err = scanMemory(tx.QueryRow(ctx, `with `+memoryBefore(``)+`
			said as (
				-- now() as a column: Citus refuses it within a CASE of an UPDATE.
				select b.id, $14::bool or $10::real is not null or ($8::text is not null and $8 <> b.content) as now_confirmed,
					now() as at
				from before b
			),
			changed as (
				update public.learner_memories m set
					type = coalesce($7, type),
					content = coalesce($8, m.content),
					importance = coalesce($9, importance),
					confidence = case when s.now_confirmed then coalesce($10, $15) else m.confidence end,
					last_seen_at = case when s.now_confirmed then s.at else last_seen_at end,
					status = case when $14 then 'current' else status end,
					superseded_by = case when $14 then null else superseded_by end,
					needs_review = needs_review and not $14,
					metadata = coalesce($11::jsonb, metadata),
					embedding = case when $12::text is not null then $12::text::extensions.vector
						when $8 is not null and $8 <> m.content then null else embedding end,
					embedding_model = case when $12::text is not null then $13
						when $8 is not null and $8 <> m.content then null else embedding_model end,
					updated_at = now()
				from said s
				where m.facilitator_id = $1::uuid and m.id = s.id
				returning m.*
			),`+relearntSQL+recordChangeSQL,
			me, p.Change(), mentor.ActorFacilitator, nil, nil,
			id, p.Type, p.Content, p.Importance, p.Confidence, metadata, vector, model, p.Confirm, mentor.PersonConfidence))
		if errors.Is(err, pgx.ErrNoRows) {
			return mentor.Errorf(mentor.CodeNotFound, "Memory not found")
		}
		return err
	})
	if err == nil && p.Change() == mentor.ChangeCorrected {
		// Its history's record of this correction is written by the same
		// statement, which cannot read it back.
		updated.CorrectedAt = &updated.UpdatedAt
	}
	return updated, err
}

// MemoryHistory lists a memory's changes, oldest first.
func (s *Store) MemoryHistory(ctx context.Context, id string) ([]mentor.MemoryChange, error) {
	var changes []mentor.MemoryChange
	err := s.read(ctx, nil, func(b *pgx.Batch, me string) {
		b.Queue(`select id, memory_id::text, change, actor, job_id, session_id::text, related_memory_id::text,
				content_before, content_after, confidence_before, confidence_after, status_after, created_at
			from public.memory_history
			where facilitator_id = $1::uuid and memory_id = $2::uuid
			order by id
			limit $3`, me, id, mentor.MaxMemoryHistory)
	}, func(br pgx.BatchResults) error {
		var err error
		changes, err = collectRows(br, func(row pgx.CollectableRow) (mentor.MemoryChange, error) {
			var c mentor.MemoryChange
			var before, after *float32
			err := row.Scan(&c.ID, &c.MemoryID, &c.Change, &c.Actor, &c.JobID, &c.SessionID, &c.RelatedMemoryID,
				&c.ContentBefore, &c.ContentAfter, &before, &after, &c.StatusAfter, &c.At)
			c.ConfidenceBefore, c.ConfidenceAfter = optionalScore(before), optionalScore(after)
			return c, err
		})
		return err
	})
	if err == nil && len(changes) == 0 {
		return nil, mentor.Errorf(mentor.CodeNotFound, "Memory not found")
	}
	return changes, err
}

// optionalScore rounds a real column that may be null.
func optionalScore(f *float32) *float64 {
	if f == nil {
		return nil
	}
	return new(roundScore(float64(*f)))
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
		args = append(args, q.All, q.Limit, q.Offset, q.CurrentOnly)
		b.Queue(`select `+memoryColumns+`, `+correctedAtSQL+` from public.learner_memories
			where facilitator_id = $1::uuid
				and ($8 or coalesce(learner_id, '`+nilLearner+`'::uuid) = $2::uuid)
				and `+memoryFilterSQL+`
				and (not $11 or status = 'current')
			order by created_at desc, id
			limit $9 offset $10`, args...)
	}, func(br pgx.BatchResults) error {
		var err error
		memories, err = collectRows(br, func(row pgx.CollectableRow) (mentor.LearnerMemory, error) {
			var correctedAt *time.Time
			m, err := scanMemory(row, &correctedAt)
			m.CorrectedAt = correctedAt
			return m, err
		})
		return err
	})
	return memories, err
}
