package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// An active conversation's summary is parsed for search once for each
// version of it, by the worker, instead of on every search (migration
// 0057): search reads the stored words when they are current and parses
// the summary itself while they are not.

// SummariesDue lists, across facilitators, the conversations whose summary
// changed at least settled ago and has not been parsed since, up to limit
// conversations, oldest change first, grouped by facilitator. It runs as
// memory_worker, which sees which conversations and whose, nothing said
// in them.
func (s *Store) SummariesDue(ctx context.Context, settled time.Duration, limit int) ([]mentor.SummariesDue, error) {
	return queryAsWorker(ctx, s, func(row pgx.CollectableRow) (mentor.SummariesDue, error) {
		var d mentor.SummariesDue
		return d, row.Scan(&d.FacilitatorID, &d.ConversationIDs)
	}, `select facilitator_id::text, array_agg(conversation_id::text order by listed_at)
		from (select facilitator_id, conversation_id, listed_at from private.summary_vectors_due
			where listed_at <= now() - make_interval(secs => $1) order by listed_at limit $2) d
		group by facilitator_id order by min(listed_at)`, settled.Seconds(), limit)
}

// RefreshSummaryVectors stores the parsed summaries of the caller's
// conversations named, which SummariesDue listed, and takes them off the
// list. A summary changed meanwhile has its vector cleared again by the
// change, which waits for this transaction's lock on the row or comes
// after it, and is listed again. It returns how many it parsed.
func (s *Store) RefreshSummaryVectors(ctx context.Context, conversationIDs []string) (int, error) {
	var parsed int
	err := s.inTx(ctx, func(tx pgx.Tx, me string) error {
		b := &pgx.Batch{}
		b.Queue(`update public.conversation_updates c
			set summary_vector = public.summary_search_vector(c.summary)
			where c.facilitator_id = $1::uuid and c.id = any($2::uuid[]) and c.summary_vector is null`, me, conversationIDs)
		b.Queue(`delete from private.summary_vectors_due
			where facilitator_id = $1::uuid and conversation_id = any($2::uuid[])`, me, conversationIDs)
		return sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
			updated, err := br.Exec()
			if err != nil {
				return err
			}
			parsed = int(updated.RowsAffected())
			_, err = br.Exec()
			return err
		})
	})
	return parsed, err
}
