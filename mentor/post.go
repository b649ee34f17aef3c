package mentor

import (
	"slices"
	"strings"
	"time"
)

// The rules of a post. The store reads what a post works on and writes what
// these functions decide, in one transaction and a few round trips; the
// functions themselves touch no database.

// recentTurnsKept is how many of the latest turns a conversation's record
// carries.
const recentTurnsKept = 10

// SummaryTurnsMax bounds the turns one summarizer call is given, so a
// conversation whose summary fell far behind (a long model outage) still
// catches up in one bounded request.
const SummaryTurnsMax = 200

// AppendRequest is a post: turns for the conversation with a learner, or
// the general conversation when LearnerID is nil.
type AppendRequest struct {
	LearnerID *string
	Turns     []Turn
	// Regenerate asks for the summary to be written anew.
	Regenerate bool
}

// StoredTurn is a turn with its id in the log of turns, which grows with
// every turn stored.
type StoredTurn struct {
	LogID int64
	Turn
}

// Resent turns. A client may resend its whole history, or retry after a
// timeout, without anything being stored or counted twice.

// HaveClientIDs reports whether every turn carries the client's id. Resent
// turns are then recognised by id (UnstoredByID), otherwise by lining the
// posted turns up against the latest stored ones (UnstoredAfter).
func HaveClientIDs(turns []Turn) bool {
	return !slices.ContainsFunc(turns, func(t Turn) bool { return t.ID == "" })
}

// UnstoredByID returns the posted turns that are not stored yet, given the
// stored turns that carry one of their client ids. A turn is stored already
// if a turn with the same id, role and content is: ids alone are not trusted
// to be unique across the client's sessions. A turn posted twice is new
// once.
func UnstoredByID(posted, stored []Turn) []Turn {
	type key struct{ id, role, content string }
	seen := map[key]bool{}
	for _, t := range stored {
		seen[key{t.ID, t.Role, t.Content}] = true
	}
	var unstored []Turn
	for _, t := range posted {
		k := key{t.ID, t.Role, t.Content}
		if !seen[k] {
			seen[k] = true
			unstored = append(unstored, t)
		}
	}
	return unstored
}

// UnstoredAfter returns the posted turns that are not stored yet, given the
// latest stored turns, oldest first (as many as were posted suffice): the
// longest prefix of the posted turns that ends with the latest stored turns
// was sent before.
func UnstoredAfter(latest, posted []Turn) []Turn {
	same := func(a, b Turn) bool { return a.Role == b.Role && a.Content == b.Content }
	for n := len(posted); n > 0; n-- {
		m := min(n, len(latest))
		if m == 0 {
			break
		}
		if slices.EqualFunc(posted[n-m:n], latest[len(latest)-m:], same) {
			return posted[n:]
		}
	}
	return posted
}

// SummaryFromScratch reports whether the summary is written anew from the
// whole active segment, rather than by folding the turns it does not cover
// yet into it: when asked to, and when there is no summary to fold into.
func SummaryFromScratch(record ConversationRecord, regenerate bool) bool {
	return regenerate || record.Summary == ""
}

// PlanSummary decides the summarizer's work after a post from the turns
// read for it, oldest first: the latest SummaryTurnsMax of the active
// segment when SummaryFromScratch, of those after SummarizedTurnID
// otherwise. It returns nil when the summary already covers them, unless
// asked to regenerate it. The names are the conversation's learner's and
// the facilitator's other learners' (see SummaryRequest).
func PlanSummary(record ConversationRecord, regenerate bool, turns []StoredTurn, learnerName string, otherNames []string) *SummaryJob {
	if len(turns) == 0 {
		return nil
	}
	through := turns[len(turns)-1].LogID
	if !regenerate && through <= record.SummarizedTurnID {
		return nil
	}
	plain := make([]Turn, len(turns))
	for i, t := range turns {
		plain[i] = t.Turn
	}
	req := SummaryRequest{Turns: plain, LearnerName: learnerName, OtherNames: otherNames}
	if !SummaryFromScratch(record, regenerate) {
		req.Previous = record.Summary
	}
	return &SummaryJob{ConversationID: record.ID, Request: req, ThroughTurnID: through}
}

// maxInlineSummaryBytes bounds the text a summary written inside a post's
// own transaction may read: an exchange or two and the summary so far,
// which the offline summarizer reads in about a millisecond. A larger job
// (a post of 200 turns took 354 ms) would hold the conversation's lock and
// a connection meanwhile, so it is left for after the commit.
const maxInlineSummaryBytes = 16 << 10

// FitsInline reports whether the job is small enough to be summarized in
// the post's own transaction.
func (j SummaryJob) FitsInline() bool {
	size := len(j.Request.Previous)
	for _, t := range j.Request.Turns {
		size += len(t.Content)
	}
	return size <= maxInlineSummaryBytes
}

// InlineSummary is the outcome of a summary written in the post's own
// transaction.
type InlineSummary struct {
	Job     SummaryJob
	Summary string
	Err     error // the summarizer failed: the summary is marked stale
}

// RecordUpdate is what a post writes to its conversation's record.
type RecordUpdate struct {
	AddedTurns int
	// AddedBytes is the size of the new turns' text, one per line, by
	// which the segment grows toward its byte limit.
	AddedBytes  int
	RecentTurns TurnsJSON
	// Summary, when set, replaces the summary, which then covers the turns
	// through SummarizedTurnID and is no longer stale.
	Summary          *string
	SummarizedTurnID int64
	// MarkStale records that the summarizer failed.
	MarkStale bool
	// FirstTurnAt and LastTurnAt are the earliest and the latest time of
	// the turns added, by which the span of time the conversation covers
	// widens; zero when none was added.
	FirstTurnAt, LastTurnAt time.Time
}

// UpdateRecord decides what a post writes to its conversation's record,
// from the turns it added (as stored) and the summary written in its
// transaction, if one was (nil otherwise). It reports false when there is
// nothing to write: every posted turn was stored already and no summary was
// attempted.
func UpdateRecord(record ConversationRecord, added []Turn, inline *InlineSummary) (RecordUpdate, bool, error) {
	if len(added) == 0 && inline == nil {
		return RecordUpdate{}, false, nil
	}
	recentJSON, err := record.RecentTurns.WithLatest(added, recentTurnsKept)
	if err != nil {
		return RecordUpdate{}, false, err
	}
	update := RecordUpdate{AddedTurns: len(added), AddedBytes: len(joinContents(added)), RecentTurns: recentJSON}
	for _, t := range added {
		if update.FirstTurnAt.IsZero() || t.CreatedAt.Before(update.FirstTurnAt) {
			update.FirstTurnAt = t.CreatedAt
		}
		if t.CreatedAt.After(update.LastTurnAt) {
			update.LastTurnAt = t.CreatedAt
		}
	}
	switch {
	case inline == nil:
	case inline.Err != nil:
		update.MarkStale = true
	default:
		update.Summary = &inline.Summary
		update.SummarizedTurnID = inline.Job.ThroughTurnID
	}
	return update, true, nil
}

// Applied is the record as the update leaves it, given the turn count and
// the time of the update, which the database decides: archiving, which the
// update may set off, takes the oldest turns away from the count.
func (u RecordUpdate) Applied(record ConversationRecord, turnCount int, updatedAt time.Time) ConversationRecord {
	record.TurnCount, record.UpdatedAt = turnCount, updatedAt
	record.RecentTurns = u.RecentTurns
	switch {
	case u.Summary != nil:
		record.Summary, record.SummarizedTurnID, record.SummaryStale = *u.Summary, u.SummarizedTurnID, false
	case u.MarkStale:
		record.SummaryStale = true
	}
	return record
}

// joinContents is the text of turns, one per line.
func joinContents(turns []Turn) string {
	contents := make([]string, len(turns))
	for i, t := range turns {
		contents[i] = t.Content
	}
	return strings.Join(contents, "\n")
}
