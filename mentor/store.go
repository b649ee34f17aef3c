package mentor

import (
	"context"
	"time"
)

// Store keeps the memory. Every method acts as the caller found in ctx (see
// WithCaller) and sees only that caller's rows; a learner id that is not one
// of the caller's learners gives a CodeNotFound error.
type Store interface {
	ListLearners(ctx context.Context) ([]Learner, error)
	CreateLearner(ctx context.Context, name string) (Learner, error)
	RenameLearner(ctx context.Context, learnerID, name string) (Learner, error)

	// GetConversation returns the active conversation, or nil when there is
	// none.
	GetConversation(ctx context.Context, learnerID *string) (*ConversationRecord, error)

	// AppendTurns stores the posted turns that are not stored yet, in one
	// transaction. A store with a summarizer of its own, one that answers
	// at once without the network, also brings the summary up to date in
	// that transaction; otherwise it says what the summarizer has to do
	// next.
	AppendTurns(ctx context.Context, req AppendRequest) (Appended, error)

	// SaveSummary stores a summary unless one covering newer turns was saved
	// meanwhile; MarkSummaryStale records that the summarizer failed. Both
	// return the conversation as it then is.
	SaveSummary(ctx context.Context, job SummaryJob, summary string) (ConversationRecord, error)
	MarkSummaryStale(ctx context.Context, job SummaryJob) (ConversationRecord, error)

	// ClearConversation archives the active segment, then removes the active
	// conversation. It reports whether anything was archived.
	ClearConversation(ctx context.Context, learnerID *string) (archived bool, err error)

	Search(ctx context.Context, q SearchQuery) ([]SearchResult, error)
	// Archive reads one archived conversation with a page of its turns;
	// CodeNotFound when it is not the caller's.
	Archive(ctx context.Context, q ArchiveQuery) (ArchivedConversation, error)

	// SaveMemory stores a memory, or reinforces the current memory of the
	// same learner and type that it repeats, or supersedes the one it
	// contradicts.
	SaveMemory(ctx context.Context, m NewMemory) (Saved, error)
	UpdateMemory(ctx context.Context, id string, p MemoryPatch) (LearnerMemory, error)
	DeleteMemory(ctx context.Context, id string) error
	// MemoryHistory lists a memory's changes, oldest first; CodeNotFound
	// when it has none of the caller's.
	MemoryHistory(ctx context.Context, id string) ([]MemoryChange, error)
	// QueueConsolidation queues a run of the learner's consolidation, or
	// returns the one queued or running.
	QueueConsolidation(ctx context.Context, learnerID string) (ConsolidationRun, error)
	// ListConsolidations lists runs newest first: one learner's, or with
	// nil every learner's.
	ListConsolidations(ctx context.Context, learnerID *string, limit int) ([]ConsolidationRun, error)
	// Profile reads the learner's profile; one never built has no lines.
	Profile(ctx context.Context, learnerID string) (Profile, error)
	SaveProfile(ctx context.Context, p Profile) error
	ListMemories(ctx context.Context, q ListQuery) ([]LearnerMemory, error)
	Recall(ctx context.Context, q RecallQuery) (Recall, error)
	// LiveSession describes the conversation's live session; the zero state
	// when none is live.
	LiveSession(ctx context.Context, learnerID *string) (SessionState, error)
	// EndSession ends the live session, stores the next session's opening
	// and returns both; CodeNotFound when no session is live.
	EndSession(ctx context.Context, learnerID *string, reason string) (Ended, error)
	// Opening returns the stored opening of the next session, or nil.
	Opening(ctx context.Context, learnerID *string) (*Opening, error)

	// EraseLearner removes the learner and everything derived from what was
	// said about them, and keeps a receipt; CodeNotFound when the learner
	// is not the caller's.
	EraseLearner(ctx context.Context, learnerID string) (Erasure, error)
	// EraseAccount removes everything of the caller's, receipts included.
	EraseAccount(ctx context.Context) (Erasure, error)
	// ListErasures lists the caller's receipts, newest first.
	ListErasures(ctx context.Context, limit int) ([]Erasure, error)

	// ProposeAction stores what the mentor asks to change as a pending
	// action, changing nothing else; CodeNotFound when a memory or learner
	// it names is not the caller's, or no memory matches its topic.
	ProposeAction(ctx context.Context, p Proposal) (PendingAction, error)
	// GetAction reads one of the caller's actions.
	GetAction(ctx context.Context, id string) (PendingAction, error)
	ListActions(ctx context.Context, q ActionQuery) ([]PendingAction, error)
	// DecideAction confirms (applies, with the embedding of a correction's
	// new text) or cancels a pending action, in one transaction;
	// CodeConflict when it was decided already, expired, or a memory it
	// names changed since it was proposed.
	DecideAction(ctx context.Context, id string, confirm bool, embedding *Embedding) (PendingAction, error)
	// FlagMemory marks a memory for the facilitator's review, recording it
	// in the memory's history as made from the chat.
	FlagMemory(ctx context.Context, id string) (LearnerMemory, error)

	// MemorySources lists the conversation turns the memory was learnt
	// from; CodeNotFound for a memory that is not the caller's.
	MemorySources(ctx context.Context, id string) (MemorySources, error)
	// ForgetMemories forgets, as DeleteMemory does, every memory the query
	// selects, and returns how many.
	ForgetMemories(ctx context.Context, q ForgetQuery) (int, error)
	// LearningNow counts the learner's extraction and consolidation work
	// queued and running.
	LearningNow(ctx context.Context, learnerID string) (LearningNow, error)
	LearnerSettings(ctx context.Context, learnerID string) (LearnerSettings, error)
	SetLearnerLearning(ctx context.Context, learnerID string, learning bool) (LearnerSettings, error)
	AccountSettings(ctx context.Context) (AccountSettings, error)
	ChangeAccountSettings(ctx context.Context, c AccountSettingsChange) (AccountSettings, error)
	// Export gives emit every record of the caller's, or of one of their
	// learners, a row at a time and in the archive's order (see
	// ArchiveFormat), all read from one snapshot; CodeNotFound before any
	// record when the learner is not the caller's.
	Export(ctx context.Context, learnerID *string, emit func(ExportRecord) error) error
	// Import stores an archive's records, as next reads them until io.EOF,
	// in the caller's account, all in one transaction, and counts per type
	// those stored and those found stored by an earlier import. A record
	// that is refused, or that refers to one not above it in the archive,
	// fails it all with CodeInvalid naming its line.
	Import(ctx context.Context, next func() (ArchiveLine, error)) (map[string]ImportCount, error)
}

// Appended is the outcome of AppendTurns.
type Appended struct {
	Conversation ConversationRecord
	Added        int  // turns stored by this call; resent turns are not counted
	Archived     bool // a segment went to the archive
	// Job is what the summarizer has to do next; nil when the summary is
	// up to date or was brought up to date in the store's transaction.
	Job *SummaryJob
	// SummaryErr is the failure of the summarizer that ran in the store's
	// transaction; the summary was then marked stale.
	SummaryErr error
	// SessionID is the live session the new turns joined; "" when no turn
	// was new.
	SessionID string
	// Queued is true when memory extraction was queued for the new turns.
	Queued bool
}

// SummaryJob is the summarizer work an update leaves: nil when the summary
// already covers every stored turn.
type SummaryJob struct {
	ConversationID string
	Request        SummaryRequest
	// ThroughTurnID is the newest stored turn the summary will cover.
	ThroughTurnID int64
}

// SearchQuery asks for the conversations that best match Text, and, with
// a Window, prefers those held in that time.
type SearchQuery struct {
	Text           string
	LearnerID      *string // nil searches every conversation of the caller
	IncludeArchive bool
	Limit          int
	Window         *TimeWindow
}

// SearchResult is one matching conversation, active or archived.
type SearchResult struct {
	ID             string    `json:"id"`
	Summary        string    `json:"summary"`
	TurnCount      int       `json:"turn_count"`
	Date           time.Time `json:"date"`
	LearnerID      *string   `json:"learner_id"`
	LearnerContext string    `json:"learner_context"`
	Archived       bool      `json:"archived"`
	Rank           float64   `json:"rank"`
	// FirstTurnAt and LastTurnAt are the times of its earliest and latest
	// turns (an active conversation whose turns were all archived has
	// none).
	FirstTurnAt *time.Time `json:"first_turn_at,omitempty"`
	LastTurnAt  *time.Time `json:"last_turn_at,omitempty"`
	// Snippet is HTML-escaped text with the matched words in <mark>.
	Snippet string    `json:"snippet"`
	Matches TurnsJSON `json:"matches"`
}
