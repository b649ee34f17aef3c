package migrations_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
)

// TestAnArchiveKnowsTheTimeItsTurnsCover checks that an archived
// conversation's first_turn_at and last_turn_at are the earliest and latest
// of its turns' times, whatever order they were posted in, whoever writes
// the row: the archiving on clear, and an insert that claims another span
// (as an import could), which gets its turns' span instead.
func TestAnArchiveKnowsTheTimeItsTurnsCover(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	december := time.Date(2023, time.December, 4, 18, 30, 0, 0, time.UTC)
	august := time.Date(2023, time.August, 12, 9, 0, 0, 0, time.UTC)

	var first, last time.Time
	asService(t, pool, a, func(tx pgx.Tx) {
		learner := ptr(createLearner(t, tx, a, "Sam"))
		conv := createConversation(t, tx, a, learner, "")
		// Imported history arrives after a turn said today.
		apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, learner_id, role, content, created_at)
			values ($1::uuid, $2::uuid, 'user', 'Today', now()),
				($1::uuid, $2::uuid, 'user', 'Sam at the aquarium', $3::timestamptz),
				($1::uuid, $2::uuid, 'assistant', 'The visit in August', $4::timestamptz)`, a, learner, december, august)
		apptest.Exec(t, tx, `delete from public.conversation_updates where facilitator_id = $1::uuid and id = $2::uuid`, a, conv)
		if err := tx.QueryRow(t.Context(), `select first_turn_at, last_turn_at from public.conversation_history_archive
			where facilitator_id = $1::uuid`, a).Scan(&first, &last); err != nil {
			t.Fatal(err)
		}
	})
	if !first.Equal(august) || time.Since(last) > time.Minute {
		t.Errorf("archived span %s – %s, want %s – now", first, last, august)
	}

	// The row an import writes claims a span its turns do not have.
	var claimed [2]time.Time
	if err := pool.QueryRow(t.Context(), `insert into public.conversation_history_archive
			(facilitator_id, summary, conversation_turns, turn_count, first_turn_at, last_turn_at)
		values ($1::uuid, 'Imported', jsonb_build_array(
				jsonb_build_object('role', 'user', 'content', 'Hi', 'created_at', $2::timestamptz),
				jsonb_build_object('role', 'assistant', 'content', 'Hello')), 2,
			'2001-01-01', '2099-01-01')
		returning first_turn_at, last_turn_at`, a, december).Scan(&claimed[0], &claimed[1]); err != nil {
		t.Fatal(err)
	}
	if !claimed[0].Equal(december) || !claimed[1].Equal(december) {
		t.Errorf("imported span %v, want its one dated turn's time %s", claimed, december)
	}

	// Turns with no time at all cover the moment they were archived.
	var span [3]time.Time
	if err := pool.QueryRow(t.Context(), `insert into public.conversation_history_archive
			(facilitator_id, summary, conversation_turns, turn_count, archived_at)
		values ($1::uuid, 'Old', '[{"role": "user", "content": "Hi"}]', 1, '2020-02-02T10:00:00Z')
		returning first_turn_at, last_turn_at, archived_at`, a).Scan(&span[0], &span[1], &span[2]); err != nil {
		t.Fatal(err)
	}
	if !span[0].Equal(span[2]) || !span[1].Equal(span[2]) {
		t.Errorf("undated archive spans %v, want its archived_at", span)
	}
}

// TestTheActiveConversationKnowsTheTimeItsTurnsCover checks that archiving
// the oldest turns narrows the active conversation's span to the turns
// left active, and that the archived segment covers the others.
func TestTheActiveConversationKnowsTheTimeItsTurnsCover(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	start := time.Date(2022, time.March, 1, 18, 0, 0, 0, time.UTC)
	asService(t, pool, a, func(tx pgx.Tx) {
		createConversation(t, tx, a, nil, "")
		// 52 turns a day apart, said before this segment was begun.
		apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, role, content, created_at)
			select $1::uuid, 'user', 'turn ' || n, $2::timestamptz + (n - 1) * interval '1 day'
			from generate_series(1, 52) n order by n returning id`, a, start)
		apptest.Exec(t, tx, `update public.conversation_updates
			set turn_count = 52, first_turn_at = $2::timestamptz, last_turn_at = $2::timestamptz + interval '51 days'
			where facilitator_id = $1::uuid`, a, start)
		var first, last time.Time
		if err := tx.QueryRow(t.Context(), `select first_turn_at, last_turn_at from public.conversation_updates
			where facilitator_id = $1::uuid`, a).Scan(&first, &last); err != nil {
			t.Fatal(err)
		}
		if !first.Equal(start.AddDate(0, 0, 50)) || !last.Equal(start.AddDate(0, 0, 51)) {
			t.Errorf("active span %s – %s after archiving 50 turns, want the last two days", first, last)
		}
		if err := tx.QueryRow(t.Context(), `select first_turn_at, last_turn_at from public.conversation_history_archive
			where facilitator_id = $1::uuid`, a).Scan(&first, &last); err != nil {
			t.Fatal(err)
		}
		if !first.Equal(start) || !last.Equal(start.AddDate(0, 0, 49)) {
			t.Errorf("archived span %s – %s, want the first fifty days", first, last)
		}
	})
}
