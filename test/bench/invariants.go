package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// conversationOf selects a conversation's rows by facilitator ($1) and
// learner ($2, the nil uuid for the general conversation), with the
// expression the schema's indexes use.
const conversationOf = `facilitator_id = $1::uuid
	and coalesce(learner_id, '` + nilLearner + `'::uuid) = $2::uuid`

// nilLearner stands for the general conversation's learner.
const nilLearner = "00000000-0000-0000-0000-000000000000"

// archivedThrough is the highest log id of the archive ranges of a
// conversation (facilitator and learner key: SQL expressions): its active
// turns are those above it linked to no archive (migration 0037).
func archivedThrough(facilitator, learnerKey string) string {
	return `(select coalesce(max(h.last_turn_id), 0) from public.conversation_history_archive h
		where h.facilitator_id = ` + facilitator + ` and h.last_turn_id is not null
			and coalesce(h.learner_id, '` + nilLearner + `'::uuid) = ` + learnerKey + `)`
}

// countLogs counts each client's conversation's turns before the run.
func countLogs(ctx context.Context, admin *pgxpool.Pool, clients []*simClient) error {
	for _, sc := range clients {
		if err := admin.QueryRow(ctx, `select count(*) from public.conversation_turns where `+conversationOf,
			sc.f.id, sc.key()).Scan(&sc.logBefore); err != nil {
			return err
		}
	}
	return nil
}

// dropQueuedJobs deletes the extraction jobs earlier model runs left
// queued. The worker takes the oldest first, so it would spend this run on
// them, and the backlog would grow with every run.
func dropQueuedJobs(ctx context.Context, admin *pgxpool.Pool) error {
	tag, err := admin.Exec(ctx, `delete from public.memory_jobs
		where status in ('pending', 'running')
			and facilitator_id in (select id from auth.users where email like '%' || $1)`, benchEmailDomain)
	if err != nil {
		return err
	}
	if n := tag.RowsAffected(); n > 0 {
		logf("dropped %d extraction jobs earlier runs left queued", n)
	}
	return nil
}

func lastJobID(ctx context.Context, admin *pgxpool.Pool) (int64, error) {
	var id int64
	err := admin.QueryRow(ctx, `select coalesce(max(id), 0) from public.memory_jobs`).Scan(&id)
	return id, err
}

// jobCounts are the extraction jobs the run queued, by what became of them.
type jobCounts struct {
	queued, done, waiting, failed int
}

func countJobs(ctx context.Context, admin *pgxpool.Pool, after int64) (jobCounts, error) {
	var j jobCounts
	err := admin.QueryRow(ctx, `select count(*), count(*) filter (where status = 'done'),
			count(*) filter (where status in ('pending', 'running')), count(*) filter (where status = 'failed')
		from public.memory_jobs where id > $1 and kind = 'extract'`, after).Scan(&j.queued, &j.done, &j.waiting, &j.failed)
	return j, err
}

// invariants is what the database holds for the clients' conversations
// after a run, as superuser (no row-level security in the way).
type invariants struct {
	conversations int
	acked         int // turns acknowledged by a successful post
	storedOnce    int // of them, in the log exactly once
	missing       int
	twice         int // acknowledged or not, in the log more than once
	unacked       int // turns of failed posts
	unackedStored int
	grown         int // turns the logs grew by
	logTurns      int
	archived      int // archive rows' turn_count, summed
	active        int // conversation_updates.turn_count, summed
	problems      []string
}

func checkInvariants(ctx context.Context, admin *pgxpool.Pool, clients []*simClient) (invariants, error) {
	var v invariants
	for _, sc := range clients {
		var logTurns, unarchived, active, archived int
		if err := admin.QueryRow(ctx, `select
				(select count(*) from public.conversation_turns where `+conversationOf+`),
				(select count(*) from public.conversation_turns where `+conversationOf+` and archive_id is null
					and id > `+archivedThrough("$1::uuid", "$2::uuid")+`),
				(select coalesce(sum(turn_count), 0) from public.conversation_updates where `+conversationOf+`),
				(select coalesce(sum(turn_count), 0) from public.conversation_history_archive where `+conversationOf+`)`,
			sc.f.id, sc.key()).Scan(&logTurns, &unarchived, &active, &archived); err != nil {
			return v, err
		}
		stored, err := countsByKey(ctx, admin, `select client_turn_id, count(*)::integer from public.conversation_turns
			where `+conversationOf+` and client_turn_id = any($3::text[])
			group by client_turn_id`, sc.f.id, sc.key(), slices.Concat(sc.acked, sc.unacked))
		if err != nil {
			return v, err
		}

		conversation := "facilitator " + sc.f.id + ", " + cmp.Or(sc.name, "general conversation")
		sentStored, missing := 0, 0
		for _, id := range sc.acked {
			switch stored[id] {
			case 0:
				missing++
			case 1:
				v.storedOnce++
			}
		}
		for _, n := range stored {
			sentStored += n
			if n > 1 {
				v.twice++
			}
		}
		for _, id := range sc.unacked {
			v.unackedStored += min(stored[id], 1)
		}
		grown := logTurns - sc.logBefore
		if missing > 0 {
			v.problems = append(v.problems, fmt.Sprintf("%s: %d acknowledged turns are not in the log", conversation, missing))
		}
		if grown != sentStored {
			v.problems = append(v.problems, fmt.Sprintf("%s: the log grew by %d turns, but %d of the turns the client sent are in it",
				conversation, grown, sentStored))
		}
		if archived+active != logTurns || active != unarchived {
			v.problems = append(v.problems, fmt.Sprintf("%s: archived %d + active %d turns, but %d in the log (%d not archived)",
				conversation, archived, active, logTurns, unarchived))
		}
		v.conversations++
		v.acked += len(sc.acked)
		v.missing += missing
		v.unacked += len(sc.unacked)
		v.grown += grown
		v.logTurns += logTurns
		v.archived += archived
		v.active += active
	}
	if v.twice > 0 {
		v.problems = append(v.problems, fmt.Sprintf("%d turns are in the log more than once", v.twice))
	}
	return v, nil
}

// countsByKey runs a query of (text, integer) rows and returns them as a
// map. db is a pool or a transaction.
func countsByKey(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args ...any) (map[string]int, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			return nil, err
		}
		counts[key] = n
	}
	return counts, rows.Err()
}
