package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/mentor"
)

// importTable imports the records of one type of an archive (see
// exportTables): SQL inserts one record ($2, the whole line as jsonb, read
// with jsonb_populate_record) as the caller's ($1), with the arguments args
// makes from it (new ids in place of the exported ones), and does nothing
// when the record was imported before.
type importTable struct {
	SQL  string
	args func(run *importRun, r *archiveRecord) ([]any, error)
}

var importTables = map[string]importTable{
	"account_settings": {`insert into public.facilitator_settings (facilitator_id, learning, retention_days)
		select $1::uuid, r.learning, r.retention_days from jsonb_populate_record(null::public.facilitator_settings, $2::jsonb) r
		on conflict do nothing`,
		func(*importRun, *archiveRecord) ([]any, error) { return nil, nil }},
	"learner_settings": {`insert into public.learner_settings (facilitator_id, learner_id, learning)
		select $1::uuid, $3::uuid, r.learning from jsonb_populate_record(null::public.learner_settings, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			if r.LearnerID == nil {
				return nil, run.invalid("A learner_settings record needs its learner_id")
			}
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			return []any{learner}, err
		}},
	"learner": {`insert into public.learners (id, facilitator_id, name, created_at)
		select $3::uuid, $1::uuid, r.name, r.created_at from jsonb_populate_record(null::public.learners, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) { return []any{run.own("learner", r)}, nil }},
	"session": {`insert into public.mentor_sessions (id, facilitator_id, learner_id, started_at, last_activity_at,
			ended_at, end_reason, exchanges, last_message, closing, summary)
		select $3::uuid, $1::uuid, $4::uuid, r.started_at, r.last_activity_at, r.ended_at, r.end_reason, r.exchanges,
			r.last_message, r.closing, r.summary
		from jsonb_populate_record(null::public.mentor_sessions, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) { return run.idAndLearner("session", r) }},
	// The turn count, the search words and what the summary covers are set
	// once the turns are in (importRun.finish).
	"conversation": {`insert into public.conversation_updates (id, facilitator_id, learner_id, summary, summary_stale,
			recent_turns, created_at, updated_at)
		select $3::uuid, $1::uuid, $4::uuid, r.summary, r.summary_stale, r.recent_turns, r.created_at, r.updated_at
		from jsonb_populate_record(null::public.conversation_updates, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			id := run.own("conversation", r)
			run.conversations = append(run.conversations, importedConversation{id: id,
				summarizedTurn: run.key("turn", strconv.FormatInt(r.SummarizedTurnID, 10))})
			return []any{id, learner}, err
		}},
	"archived_conversation": {`insert into public.conversation_history_archive (id, facilitator_id, learner_id, summary,
			conversation_turns, turn_count, archived_at)
		select $3::uuid, $1::uuid, $4::uuid, r.summary, r.conversation_turns, r.turn_count, r.archived_at
		from jsonb_populate_record(null::public.conversation_history_archive, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			var turns []struct {
				CreatedAt json.RawMessage `json:"created_at"`
			}
			if json.Unmarshal(r.ConversationTurns, &turns) == nil {
				for _, t := range turns {
					if err := run.checkTurnTime(t.CreatedAt); err != nil {
						return nil, err
					}
				}
			}
			return run.idAndLearner("archived_conversation", r)
		}},
	"turn": {`insert into public.conversation_turns (facilitator_id, learner_id, archive_id, role, content,
			client_turn_id, created_at, import_key)
		select $1::uuid, $4::uuid, $5::uuid, r.role, r.content, r.client_turn_id, r.created_at, $3::uuid
		from jsonb_populate_record(null::public.conversation_turns, $2::jsonb) r
		on conflict (facilitator_id, import_key) where import_key is not null do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			if err := run.checkTurnTime(r.CreatedAt); err != nil {
				return nil, err
			}
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			if err != nil {
				return nil, err
			}
			archive, err := run.ref("archived_conversation", r.ArchiveID, "archive_id")
			return []any{run.own("turn", r), learner, archive}, err
		}},
	// A memory's sources are the imported turns it was learnt from; what
	// superseded it may come later in the archive, and is checked at its end.
	"memory": {`insert into public.learner_memories (id, facilitator_id, learner_id, type, content, importance, confidence,
			metadata, source, session_id, source_turn_ids, mentions, embedding, embedding_model, created_at, updated_at,
			last_seen_at, status, superseded_by, needs_review)
		select $3::uuid, $1::uuid, $4::uuid, $2::jsonb->>'memory_type', r.content, r.importance, r.confidence,
			r.metadata, r.source, $5::uuid,
			array(select t.id from public.conversation_turns t
				where t.facilitator_id = $1::uuid and t.import_key = any($7::uuid[]) order by t.id),
			r.mentions, r.embedding, r.embedding_model, r.created_at, r.updated_at,
			r.last_seen_at, r.status, $6::uuid, r.needs_review
		from jsonb_populate_record(null::public.learner_memories, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			if err != nil {
				return nil, err
			}
			session, err := run.ref("session", r.SessionID, "session_id")
			if err != nil {
				return nil, err
			}
			turns := make([]string, len(r.SourceTurnIDs))
			for i, old := range r.SourceTurnIDs {
				id := strconv.FormatInt(old, 10)
				if !run.seen["turn"][id] {
					return nil, run.missing("source_turn_ids", "turn", id)
				}
				turns[i] = run.key("turn", id)
			}
			var supersededBy *string
			if r.SupersededBy != nil {
				run.later = append(run.later, laterRef{line: run.line, field: "superseded_by", typ: "memory", id: *r.SupersededBy})
				id := run.key("memory", *r.SupersededBy)
				supersededBy = &id
			}
			return []any{run.own("memory", r), learner, session, supersededBy, turns}, nil
		}},
	// History outlives its memory: a forgotten memory's rows name one no
	// longer in the archive, so memory ids are remapped, not checked.
	"memory_history": {`insert into public.memory_history (facilitator_id, memory_id, learner_id, change, actor, session_id,
			related_memory_id, content_before, content_after, confidence_before, confidence_after, status_after,
			created_at, import_key)
		select $1::uuid, $4::uuid, $5::uuid, r.change, r.actor, $6::uuid, $7::uuid, r.content_before, r.content_after,
			r.confidence_before, r.confidence_after, r.status_after, r.created_at, $3::uuid
		from jsonb_populate_record(null::public.memory_history, $2::jsonb) r
		on conflict (facilitator_id, import_key) where import_key is not null do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			if err != nil {
				return nil, err
			}
			session, err := run.ref("session", r.SessionID, "session_id")
			if r.MemoryID == nil {
				return nil, run.invalid("memory_id is required")
			}
			return []any{run.own("memory_history", r), run.key("memory", *r.MemoryID), learner, session,
				run.remap("memory", r.RelatedMemoryID)}, err
		}},
	"session_opening": {`insert into public.session_openings (facilitator_id, learner_id, session_id, opening, computed_at)
		select $1::uuid, $3::uuid, $4::uuid, r.opening, r.computed_at
		from jsonb_populate_record(null::public.session_openings, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			if err != nil {
				return nil, err
			}
			if r.SessionID == nil {
				return nil, run.invalid("session_id is required")
			}
			session, err := run.ref("session", r.SessionID, "session_id")
			return []any{learner, session}, err
		}},
	mentor.ProfileRecordType: {`insert into public.learner_profiles (facilitator_id, learner_id, lines, own_lines, tokens,
			dropped, digest, digest_tokens, updated_at)
		select $1::uuid, $3::uuid, $4::jsonb, r.own_lines, r.tokens, $5::jsonb, r.digest, r.digest_tokens, r.updated_at
		from jsonb_populate_record(null::public.learner_profiles, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) {
			if r.LearnerID == nil {
				return nil, run.invalid("learner_id is required")
			}
			learner, err := run.ref("learner", r.LearnerID, "learner_id")
			if err != nil {
				return nil, err
			}
			lines, err := run.remapMemoryIDs(r.Lines)
			if err != nil {
				return nil, err
			}
			dropped, err := run.remapMemoryIDs(r.Dropped)
			return []any{learner, lines, dropped}, err
		}},
	// A run that had not ended never will: it has no job here.
	"consolidation_run": {`insert into public.consolidation_runs (id, facilitator_id, learner_id, trigger, status, consolidator,
			started_at, finished_at, memories_in, memories_out, changes, model_tokens, error, created_at,
			profile_tokens_before, profile_tokens_after)
		select $3::uuid, $1::uuid, $4::uuid, r.trigger,
			case when r.status in ('queued', 'running') then 'failed' else r.status end,
			r.consolidator, r.started_at, r.finished_at, r.memories_in, r.memories_out, r.changes, r.model_tokens,
			case when r.status in ('queued', 'running') then 'Not finished when the account was exported' else r.error end,
			r.created_at, r.profile_tokens_before, r.profile_tokens_after
		from jsonb_populate_record(null::public.consolidation_runs, $2::jsonb) r
		on conflict do nothing`,
		func(run *importRun, r *archiveRecord) ([]any, error) { return run.idAndLearner("consolidation_run", r) }},
}

// archiveRecord is what an import reads of a record itself: its id and the
// ids it refers to. The rest goes to the database as it is.
type archiveRecord struct {
	ID               json.RawMessage `json:"id"` // a uuid, or a number for turns and history
	LearnerID        *string         `json:"learner_id"`
	SessionID        *string         `json:"session_id"`
	ArchiveID        *string         `json:"archive_id"`
	MemoryID         *string         `json:"memory_id"`
	RelatedMemoryID  *string         `json:"related_memory_id"`
	SupersededBy     *string         `json:"superseded_by"`
	SourceTurnIDs    []int64         `json:"source_turn_ids"`
	SummarizedTurnID int64           `json:"summarized_turn_id"`
	Lines            json.RawMessage `json:"lines"`
	Dropped          json.RawMessage `json:"dropped"`
	// A turn's time, and an archived conversation's turns, whose times an
	// import checks as a post does.
	CreatedAt         json.RawMessage `json:"created_at"`
	ConversationTurns json.RawMessage `json:"conversation_turns"`
}

// importRun is one import's state: the exported ids of each type read so
// far, which later records may refer to (ids only: a few MB for 100,000
// turns), and what is checked or set at the end.
type importRun struct {
	me            string
	now           time.Time
	line          int
	noID          bool // the record read last has no id of its own
	seen          map[string]map[string]bool
	later         []laterRef
	conversations []importedConversation
}

// laterRef is a reference to a record that may come further down.
type laterRef struct {
	line    int
	field   string
	typ, id string
}

type importedConversation struct{ id, summarizedTurn string }

// importSpace is the namespace of the ids an import derives.
var importSpace = uuid.MustParse("6f1c4a52-3b8e-4d0a-9a57-2f5d0c7e9b14")

// key is the id in the caller's account of the record of type typ exported
// with id old: the same in every import of the caller's, and different for
// each caller, so a second import finds the first's rows and two accounts
// importing the same archive share nothing.
func (run *importRun) key(typ, old string) string {
	return uuid.NewSHA1(importSpace, []byte(run.me+"/"+typ+"/"+old)).String()
}

// own reads the record's own id, notes it for the records after, and
// returns its new id.
func (run *importRun) own(typ string, r *archiveRecord) string {
	old := strings.Trim(string(r.ID), `"`)
	run.noID = old == "" || old == "null"
	run.seen[typ][old] = true
	return run.key(typ, old)
}

// idAndLearner returns the arguments of a record of type typ whose only
// reference is to its learner: its new id and its learner's.
func (run *importRun) idAndLearner(typ string, r *archiveRecord) ([]any, error) {
	learner, err := run.ref("learner", r.LearnerID, "learner_id")
	return []any{run.own(typ, r), learner}, err
}

// ref returns the new id of a reference, which must be to a record above
// it in the archive; nil stays nil.
func (run *importRun) ref(typ string, old *string, field string) (*string, error) {
	if old == nil {
		return nil, nil
	}
	if !run.seen[typ][*old] {
		return nil, run.missing(field, typ, *old)
	}
	id := run.key(typ, *old)
	return &id, nil
}

// remap returns the new id of a reference that is not checked.
func (run *importRun) remap(typ string, old *string) *string {
	if old == nil {
		return nil
	}
	id := run.key(typ, *old)
	return &id
}

// remapMemoryIDs gives the lines of a profile (or the lines it dropped)
// the new ids of the memories they stand on.
func (run *importRun) remapMemoryIDs(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("[]"), nil
	}
	var lines []map[string]any
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, run.invalid("lines and dropped must be lists of objects")
	}
	for _, l := range lines {
		ids, _ := l["memory_ids"].([]any)
		for i, id := range ids {
			if s, ok := id.(string); ok {
				ids[i] = run.key("memory", s)
			}
		}
	}
	return json.Marshal(lines)
}

// checkTurnTime holds an imported turn's time (raw, its JSON) to what a
// post accepts. A value that is not an RFC 3339 string is left to the
// database, which refuses what is not a time.
func (run *importRun) checkTurnTime(raw json.RawMessage) error {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return nil
	}
	at, err := time.Parse(time.RFC3339, text)
	if err != nil {
		return nil
	}
	if err := mentor.CheckTurnTime(at, run.now); err != nil {
		return run.invalid("A turn's %s", mentor.ErrorMessage(err))
	}
	return nil
}

func (run *importRun) missing(field, typ, id string) error {
	return run.invalid("%s %s refers to a %s that is not in the archive above", field, id, typ)
}

func (run *importRun) invalid(format string, args ...any) error {
	return mentor.Errorf(mentor.CodeInvalid, format+" (line %d)", append(args, run.line)...)
}

// importTimeout bounds an import's transaction and its statements: 100,000
// turns are one statement each.
const importTimeout = 5 * time.Minute

// Import stores the archive's records in the caller's account, in one
// transaction, a record at a time as next reads them, and counts per type
// the records stored and those found from an earlier import.
func (s *Store) Import(ctx context.Context, next func() (mentor.ArchiveLine, error)) (map[string]mentor.ImportCount, error) {
	counts := map[string]mentor.ImportCount{}
	long := s.longTx(importTimeout, pgx.TxOptions{})
	err := long.inTx(ctx, func(tx pgx.Tx, me string) error {
		run := &importRun{me: me, now: time.Now(), seen: map[string]map[string]bool{}}
		for typ := range importTables {
			run.seen[typ] = map[string]bool{}
		}
		for {
			line, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			run.line = line.N
			if line.Type == mentor.ErasureRecordType {
				// What was erased in the old account is not the new one's.
				c := counts[line.Type]
				c.Skipped++
				counts[line.Type] = c
				continue
			}
			table, ok := importTables[line.Type]
			if !ok {
				return run.invalid("Unknown record type %q", line.Type)
			}
			var r archiveRecord
			if err := json.Unmarshal(line.Line, &r); err != nil {
				return run.invalid("A %s record has an id of the wrong kind", line.Type)
			}
			args, err := table.args(run, &r)
			if err != nil {
				return err
			}
			if run.noID {
				return run.invalid("A %s record needs its id", line.Type)
			}
			// A record stored returns a row; one met by ON CONFLICT, none.
			// (The count of rows affected would do on Postgres, not on
			// Citus, which counts the rows the SELECT gave.)
			var stored int
			err = tx.QueryRow(ctx, table.SQL+` returning 1`, append([]any{me, line.Line}, args...)...).Scan(&stored)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return recordRefused(err, line)
			}
			c := counts[line.Type]
			if err == nil {
				c.Imported++
			} else {
				c.Existing++
			}
			counts[line.Type] = c
		}
		return run.finish(ctx, tx)
	})
	return counts, err
}

// finish checks the references to records further down, then brings each
// imported conversation's turn count, search words, time span and
// summarized turn in line with the turns now stored.
func (run *importRun) finish(ctx context.Context, tx pgx.Tx) error {
	for _, ref := range run.later {
		if !run.seen[ref.typ][ref.id] {
			run.line = ref.line
			return run.missing(ref.field, ref.typ, ref.id)
		}
	}
	for _, c := range run.conversations {
		if _, err := tx.Exec(ctx, `update public.conversation_updates c
			set turn_count = a.turns, turns_bytes = a.bytes, turns_vector = a.words,
				first_turn_at = a.first_at, last_turn_at = a.last_at,
				summarized_turn_id = coalesce((select t.id from public.conversation_turns t
					where t.facilitator_id = $1::uuid and t.import_key = $3::uuid), 0)
			from (select count(*)::integer as turns, coalesce(sum(octet_length(t.content)), 0) as bytes,
					coalesce(to_tsvector('english', string_agg(t.content, ' ' order by t.id)), ''::tsvector) as words,
					min(t.created_at) as first_at, max(t.created_at) as last_at
				from public.conversation_turns t, public.conversation_updates u
				where u.facilitator_id = $1::uuid and u.id = $2::uuid and t.facilitator_id = $1::uuid
					and coalesce(t.learner_id, '`+nilLearner+`'::uuid) = coalesce(u.learner_id, '`+nilLearner+`'::uuid)
					and `+activeTurn("t", "$1::uuid", "coalesce(u.learner_id, '"+nilLearner+"'::uuid)")+`) a
			where c.facilitator_id = $1::uuid and c.id = $2::uuid`, run.me, c.id, c.summarizedTurn); err != nil {
			return err
		}
	}
	return nil
}

// recordRefused turns the database's refusal of a record's values (a
// wrong type, a check it fails) into a 400 naming the line; anything else
// stays a failure of the server's.
func recordRefused(err error, line mentor.ArchiveLine) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
		return mentor.Errorf(mentor.CodeInvalid, "A %s record has a value that is not allowed: %s (line %d)", line.Type, pgErr.Message, line.N)
	}
	return err
}
