package migrations_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mentormemory/app/apptest"
	"mentormemory/migrations"
	"mentormemory/postgres/pgtest"
)

// TestDeleteArchivesActiveTurns checks the archive_on_delete trigger:
// clearing a conversation moves its active turns into one archive row with
// the summary, and a conversation without active turns leaves no archive.
func TestDeleteArchivesActiveTurns(t *testing.T) {
	pool := newDatabase(t)

	turns := []turn{
		{"user", "Maya keeps mixing up numerators and denominators."},
		{"assistant", "Try cutting a paper strip into equal parts."},
		{"user", "She liked that, and asked about percentages."},
	}
	const summary = "Maya is working on fractions with paper strips."

	for _, tc := range []struct {
		name        string
		withLearner bool
	}{
		{"learner conversation", true},
		{"general conversation", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := apptest.NewUser(t, pool).ID
			var learner, other *string
			asService(t, pool, a, func(tx pgx.Tx) {
				if tc.withLearner {
					learner = ptr(createLearner(t, tx, a, "Maya"))
				}
				// Another conversation of A's whose turns must stay put.
				other = ptr(createLearner(t, tx, a, "Noah"))
				createConversation(t, tx, a, other, "")
				postTurns(t, tx, a, other, turn{"user", "Noah reads well."})

				conv := createConversation(t, tx, a, learner, "")
				if n := postTurns(t, tx, a, learner, turns...); n != len(turns) {
					t.Fatalf("turn_count = %d, want %d", n, len(turns))
				}
				apptest.Exec(t, tx, `update public.conversation_updates set summary = $2::text
					where facilitator_id = $1::uuid and id = $3::uuid`, a, summary, conv)
				if n := apptest.Exec(t, tx, `delete from public.conversation_updates
					where facilitator_id = $1::uuid and id = $2::uuid`, a, conv); n != 1 {
					t.Fatalf("deleted %d conversations, want 1", n)
				}
			})

			asService(t, pool, a, func(tx pgx.Tx) {
				got := archives(t, tx, a, learner)
				if len(got) != 1 {
					t.Fatalf("%d archive rows, want 1", len(got))
				}
				arc := got[0]
				if arc.summary == nil || *arc.summary != summary {
					t.Errorf("archive summary = %v, want %q", deref(arc.summary), summary)
				}
				if arc.turnCount != len(turns) {
					t.Errorf("archive turn_count = %d, want %d", arc.turnCount, len(turns))
				}
				if !slices.Equal(arc.turns, turns) {
					t.Errorf("archived turns = %v, want %v", arc.turns, turns)
				}
				if !equalPtr(arc.learnerID, learner) {
					t.Errorf("archive learner_id = %v, want %v", deref(arc.learnerID), deref(learner))
				}
				for i, r := range turnLog(t, tx, a, learner) {
					if r.archiveID == nil || *r.archiveID != arc.id {
						t.Errorf("log turn %d: archive_of = %v, want %s", i+1, deref(r.archiveID), arc.id)
					}
				}
				for _, r := range turnLog(t, tx, a, other) {
					if r.archiveID != nil {
						t.Errorf("turn %q of another conversation was archived", r.Content)
					}
				}
				if n := len(archives(t, tx, a, other)); n != 0 {
					t.Errorf("another conversation has %d archive rows, want 0", n)
				}
			})

			// Created again, the conversation has only archived turns:
			// clearing it archives nothing.
			asService(t, pool, a, func(tx pgx.Tx) {
				conv := createConversation(t, tx, a, learner, "A summary with nothing active")
				apptest.Exec(t, tx, `delete from public.conversation_updates
					where facilitator_id = $1::uuid and id = $2::uuid`, a, conv)
				if n := len(archives(t, tx, a, learner)); n != 1 {
					t.Errorf("%d archive rows after clearing a conversation with no active turns, want 1", n)
				}
			})
		})
	}

	t.Run("never any turns", func(t *testing.T) {
		a := apptest.NewUser(t, pool).ID
		asService(t, pool, a, func(tx pgx.Tx) {
			conv := createConversation(t, tx, a, nil, "Nothing said yet")
			apptest.Exec(t, tx, `delete from public.conversation_updates
				where facilitator_id = $1::uuid and id = $2::uuid`, a, conv)
		})
		if n := countRows(t, pool, "conversation_history_archive", a); n != 0 {
			t.Errorf("%d archive rows after clearing an empty conversation, want 0", n)
		}
	})
}

// TestAutoArchive checks the auto_archive trigger: once an update takes
// turn_count past mentor.archive_turns (50 when unset), the oldest turns
// are archived in segments of exactly the limit, with the summary current
// at that time.
func TestAutoArchive(t *testing.T) {
	pool := newDatabase(t)

	const summary = "The summary when the segment filled up."
	for _, tc := range []struct {
		name     string
		limit    int // 0: mentor.archive_turns not set
		segment  int // the limit in effect
		turns    int
		segments int
	}{
		{name: "6 turns over a limit of 4", limit: 4, segment: 4, turns: 6, segments: 1},
		{name: "10 turns over a limit of 4", limit: 4, segment: 4, turns: 10, segments: 2},
		{name: "4 turns at a limit of 4", limit: 4, segment: 4, turns: 4, segments: 0},
		{name: "51 turns over the default", segment: 50, turns: 51, segments: 1},
		{name: "50 turns at the default", segment: 50, turns: 50, segments: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := apptest.NewUser(t, pool).ID
			turns := numberedTurns(tc.turns)
			left := tc.turns - tc.segments*tc.segment
			var learner string
			asService(t, pool, a, func(tx pgx.Tx) {
				if tc.limit != 0 {
					setArchiveTurns(t, tx, tc.limit)
				}
				if got := apptest.Scalar[int](t, tx, `select public.archive_turn_limit()`); got != tc.segment {
					t.Fatalf("archive_turn_limit() = %d, want %d", got, tc.segment)
				}
				learner = createLearner(t, tx, a, "Maya")
				createConversation(t, tx, a, &learner, summary)
				if n := postTurns(t, tx, a, &learner, turns...); n != left {
					t.Errorf("turn_count after the update = %d, want %d", n, left)
				}
				// A later summary does not rewrite the archive.
				apptest.Exec(t, tx, `update public.conversation_updates set summary = 'A later summary.'
					where facilitator_id = $1::uuid and learner_id = $2::uuid`, a, learner)
			})

			asService(t, pool, a, func(tx pgx.Tx) {
				if n := apptest.Scalar[int](t, tx, `select turn_count from public.conversation_updates
					where facilitator_id = $1::uuid and learner_id = $2::uuid`, a, learner); n != left {
					t.Errorf("active turn_count = %d, want %d", n, left)
				}
				arcs := archives(t, tx, a, &learner)
				if len(arcs) != tc.segments {
					t.Fatalf("%d archive rows, want %d", len(arcs), tc.segments)
				}
				log := turnLog(t, tx, a, &learner)
				if len(log) != tc.turns {
					t.Fatalf("%d log rows, want %d", len(log), tc.turns)
				}
				for i, arc := range arcs {
					want := turns[i*tc.segment : (i+1)*tc.segment]
					if arc.turnCount != tc.segment || !slices.Equal(arc.turns, want) {
						t.Errorf("archive %d: turn_count %d, turns %v; want %d, %v",
							i, arc.turnCount, arc.turns, tc.segment, want)
					}
					if arc.summary == nil || *arc.summary != summary {
						t.Errorf("archive %d: summary %v, want %q", i, deref(arc.summary), summary)
					}
					for j, r := range log[i*tc.segment : (i+1)*tc.segment] {
						if r.archiveID == nil || *r.archiveID != arc.id {
							t.Errorf("log turn %d: archive_of %v, want %s", i*tc.segment+j+1, deref(r.archiveID), arc.id)
						}
					}
				}
				for _, r := range log[tc.turns-left:] {
					if r.archiveID != nil {
						t.Errorf("log turn %q: archive_of %s, want null (still active)", r.Content, *r.archiveID)
					}
				}
			})
		})
	}

	// Settings are transaction-local: the next transaction on the same
	// connections is back to the default.
	t.Run("limit does not outlive the transaction", func(t *testing.T) {
		a := apptest.NewUser(t, pool).ID
		for range 4 {
			asService(t, pool, a, func(tx pgx.Tx) { setArchiveTurns(t, tx, 2) })
		}
		asService(t, pool, a, func(tx pgx.Tx) {
			if got := apptest.Scalar[int](t, tx, `select public.archive_turn_limit()`); got != 50 {
				t.Errorf("archive_turn_limit() = %d after earlier transactions set 2, want 50", got)
			}
		})
	})
}

// TestArchivingRewritesNoTurn checks that archiving records the range of
// the turns it takes (migration 0037) instead of stamping each of them: the
// archived turns' rows are the ones the posts wrote, and they belong to
// their archive all the same.
func TestArchivingRewritesNoTurn(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	asService(t, pool, a, func(tx pgx.Tx) {
		setArchiveTurns(t, tx, 4)
		createConversation(t, tx, a, nil, "Rivers.")
		insertTurns(t, tx, a, nil, numberedTurns(6)...)
		before := apptest.Scalar[string](t, tx, `select string_agg(ctid::text || xmin::text, ' ' order by id)
			from public.conversation_turns where facilitator_id = $1::uuid`, a)
		apptest.Exec(t, tx, `update public.conversation_updates set turn_count = 6 where facilitator_id = $1::uuid`, a)
		after := apptest.Scalar[string](t, tx, `select string_agg(ctid::text || xmin::text, ' ' order by id)
			from public.conversation_turns where facilitator_id = $1::uuid`, a)
		if before != after {
			t.Errorf("archiving rewrote turns: %s, then %s", before, after)
		}
		arcs := archives(t, tx, a, nil)
		if len(arcs) != 1 {
			t.Fatalf("%d archive rows, want 1", len(arcs))
		}
		for i, r := range turnLog(t, tx, a, nil) {
			if archived := r.archiveID != nil && *r.archiveID == arcs[0].id; archived != (i < 4) {
				t.Errorf("turn %d: archive_of %v", i+1, deref(r.archiveID))
			}
		}
	})
}

// TestLinkedTurnsStayWithTheirArchive checks turns that an import links to
// their archive, written while posts add turns to the same conversation,
// so that the two interleave in the log: the posted turns stay active, the
// linked ones stay with their archive, and archiving the active segment
// later takes the posted turns only.
func TestLinkedTurnsStayWithTheirArchive(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	asService(t, pool, a, func(tx pgx.Tx) {
		setArchiveTurns(t, tx, 2)
		createConversation(t, tx, a, nil, "Now.")
		imported := apptest.Scalar[string](t, tx, `insert into public.conversation_history_archive
				(facilitator_id, summary, conversation_turns, turn_count)
			values ($1::uuid, 'Imported.', '[]', 2) returning id::text`, a)
		link := func(content string) {
			apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, archive_id, role, content, import_key)
				values ($1::uuid, $2::uuid, 'user', $3::text, gen_random_uuid())`, a, imported, content)
		}
		link("imported 1")
		postTurns(t, tx, a, nil, turn{"user", "posted 1"})
		link("imported 2")
		if n := postTurns(t, tx, a, nil, turn{"user", "posted 2"}, turn{"user", "posted 3"}); n != 1 {
			t.Errorf("turn_count %d after archiving, want 1", n)
		}
		archived := theOtherArchive(t, tx, a, imported)
		want := map[string]string{"imported 1": imported, "imported 2": imported,
			"posted 1": archived.id, "posted 2": archived.id, "posted 3": ""}
		for _, r := range turnLog(t, tx, a, nil) {
			got := ""
			if r.archiveID != nil {
				got = *r.archiveID
			}
			if got != want[r.Content] {
				t.Errorf("%q: archive_of %q, want %q", r.Content, got, want[r.Content])
			}
		}
		if !slices.Equal(archived.turns, []turn{{"user", "posted 1"}, {"user", "posted 2"}}) {
			t.Errorf("archived turns %v, want the first two posted", archived.turns)
		}
	})
}

// TestArchiveOfIsTheFunction checks that migrations.ArchiveOf, which the
// service writes into its statements, finds the archive public.archive_of
// finds for every turn: linked by an import, archived by range, active, in
// a learner's conversation and in the general one.
func TestArchiveOfIsTheFunction(t *testing.T) {
	pgtest.SkipOnCitus(t, "public.archive_of(t) cannot run on a shard, which is why the service writes it out")
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	asService(t, pool, a, func(tx pgx.Tx) {
		setArchiveTurns(t, tx, 2)
		learner := createLearner(t, tx, a, "Mia")
		for _, l := range []*string{nil, &learner} {
			createConversation(t, tx, a, l, "Talks.")
			postTurns(t, tx, a, l, turn{"user", "one"}, turn{"assistant", "two"})
			postTurns(t, tx, a, l, turn{"user", "three"})
		}
		imported := apptest.Scalar[string](t, tx, `insert into public.conversation_history_archive
				(facilitator_id, summary, conversation_turns, turn_count)
			values ($1::uuid, 'Imported.', '[]', 1) returning id::text`, a)
		apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, archive_id, role, content, import_key)
			values ($1::uuid, $2::uuid, 'user', 'imported', gen_random_uuid())`, a, imported)

		var linked, ranged, active, differ int
		if err := tx.QueryRow(t.Context(), `select count(*) filter (where t.archive_id is not null),
				count(*) filter (where t.archive_id is null and public.archive_of(t) is not null),
				count(*) filter (where public.archive_of(t) is null),
				count(*) filter (where public.archive_of(t) is distinct from `+migrations.ArchiveOf("t")+`)
			from public.conversation_turns t where t.facilitator_id = $1::uuid`, a).Scan(&linked, &ranged, &active, &differ); err != nil {
			t.Fatal(err)
		}
		if linked != 1 || ranged != 4 || active != 2 {
			t.Fatalf("%d linked, %d archived by range, %d active turns, want 1, 4 and 2", linked, ranged, active)
		}
		if differ != 0 {
			t.Errorf("ArchiveOf and archive_of differ on %d turns", differ)
		}
	})
}

// TestLinkedArchivesGetTheirRangeWhenNoActiveTurnLiesBelow checks
// migration 0055: an archive that holds its turns by link (made before
// 0037) is given the range of its turns' ids when no unlinked turn of its
// conversation lies below the range's end, so its conversation's active
// turns are found from that bound; one an import wrote while posts added
// turns to the same conversation keeps no range. Neither changes which
// turns any archive holds, and archiving afterwards takes the active turns
// only.
func TestLinkedArchivesGetTheirRangeWhenNoActiveTurnLiesBelow(t *testing.T) {
	pool := newDatabase(t)
	legacy, interleaved := apptest.NewUser(t, pool).ID, apptest.NewUser(t, pool).ID
	linkedArchive := func(tx pgx.Tx, facilitator string) string {
		return apptest.Scalar[string](t, tx, `insert into public.conversation_history_archive
				(facilitator_id, summary, conversation_turns, turn_count)
			values ($1::uuid, 'Before.', '[]', 2) returning id::text`, facilitator)
	}
	link := func(tx pgx.Tx, facilitator, archive, content string) {
		apptest.Exec(t, tx, `insert into public.conversation_turns (facilitator_id, archive_id, role, content, import_key)
			values ($1::uuid, $2::uuid, 'user', $3::text, gen_random_uuid())`, facilitator, archive, content)
	}
	// Each turn and the archive it belongs to.
	describe := func(rows []logRow) string {
		described := make([]string, len(rows))
		for i, r := range rows {
			described[i] = fmt.Sprint(r.Content, " in ", deref(r.archiveID))
		}
		return strings.Join(described, ", ")
	}
	var legacyArchive, interleavedArchive string
	var legacyLog, interleavedLog string
	asService(t, pool, legacy, func(tx pgx.Tx) {
		createConversation(t, tx, legacy, nil, "Now.")
		legacyArchive = linkedArchive(tx, legacy)
		link(tx, legacy, legacyArchive, "old 1")
		link(tx, legacy, legacyArchive, "old 2")
		insertTurns(t, tx, legacy, nil, turn{"user", "now 1"})
		legacyLog = describe(turnLog(t, tx, legacy, nil))
	})
	asService(t, pool, interleaved, func(tx pgx.Tx) {
		createConversation(t, tx, interleaved, nil, "Now.")
		interleavedArchive = linkedArchive(tx, interleaved)
		link(tx, interleaved, interleavedArchive, "imported 1")
		insertTurns(t, tx, interleaved, nil, turn{"user", "posted 1"})
		link(tx, interleaved, interleavedArchive, "imported 2")
		interleavedLog = describe(turnLog(t, tx, interleaved, nil))
	})

	if n := apptest.Scalar[int64](t, pool, `select private.range_linked_archives(array[$1::uuid, $2::uuid])`,
		legacy, interleaved); n != 1 {
		t.Errorf("%d archives given a range, want the legacy one alone", n)
	}
	ranges := apptest.Scalar[string](t, pool, `select string_agg(a.id::text || ' ' || coalesce(a.first_turn_id - lo, -1) || '-' ||
			coalesce(a.last_turn_id - lo, -1), ', ' order by a.id)
		from public.conversation_history_archive a,
			(select min(id) as lo from public.conversation_turns where facilitator_id = $1::uuid) f
		where a.id = $2::uuid or a.id = $3::uuid`, legacy, legacyArchive, interleavedArchive)
	want := []string{legacyArchive + " 0-1", interleavedArchive + " -1--1"}
	slices.Sort(want)
	if ranges != strings.Join(want, ", ") {
		t.Errorf("ranges %q, want %q (the legacy archive's two turns, none for the interleaved one)", ranges, strings.Join(want, ", "))
	}

	asService(t, pool, legacy, func(tx pgx.Tx) {
		if got := describe(turnLog(t, tx, legacy, nil)); got != legacyLog {
			t.Errorf("the legacy conversation's turns moved: %v, then %v", legacyLog, got)
		}
		setArchiveTurns(t, tx, 2)
		apptest.Exec(t, tx, `update public.conversation_updates set turn_count = 1 where facilitator_id = $1::uuid`, legacy)
		postTurns(t, tx, legacy, nil, turn{"user", "now 2"}, turn{"user", "now 3"})
		archived := theOtherArchive(t, tx, legacy, legacyArchive)
		if !slices.Equal(archived.turns, []turn{{"user", "now 1"}, {"user", "now 2"}}) {
			t.Errorf("archived turns %v, want the two oldest active ones", archived.turns)
		}
	})
	asService(t, pool, interleaved, func(tx pgx.Tx) {
		if got := describe(turnLog(t, tx, interleaved, nil)); got != interleavedLog {
			t.Errorf("the interleaved conversation's turns moved: %v, then %v", interleavedLog, got)
		}
	})
}

// TestAutoArchiveFiresPastTheLimitsItsFunctionsName checks that the
// auto_archive trigger's condition, which spells the two limits out rather
// than call the functions (migration 0035), agrees with them: an update to
// exactly archive_turn_limit() turns or segment_byte_limit() bytes archives
// nothing, one past either archives.
func TestAutoArchiveFiresPastTheLimitsItsFunctionsName(t *testing.T) {
	pool := newDatabase(t)
	for _, tc := range []struct {
		name, set string
		limit     int // mentor.archive_turns, 0: not set
		archived  bool
	}{
		{"turns at the default limit", "turn_count = public.archive_turn_limit()", 0, false},
		{"turns past the default limit", "turn_count = public.archive_turn_limit() + 1", 0, true},
		{"turns at a limit set", "turn_count = public.archive_turn_limit()", 3, false},
		{"turns past a limit set", "turn_count = public.archive_turn_limit() + 1", 3, true},
		{"bytes at the limit", "turns_bytes = public.segment_byte_limit()", 0, false},
		{"bytes past the limit", "turns_bytes = public.segment_byte_limit() + 1", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := apptest.NewUser(t, pool).ID
			asService(t, pool, a, func(tx pgx.Tx) {
				if tc.limit != 0 {
					setArchiveTurns(t, tx, tc.limit)
				}
				createConversation(t, tx, a, nil, "A summary.")
				insertTurns(t, tx, a, nil, numberedTurns(2)...)
				apptest.Exec(t, tx, `update public.conversation_updates set `+tc.set+`
					where facilitator_id = $1::uuid`, a)
				if got := len(archives(t, tx, a, nil)) > 0; got != tc.archived {
					t.Errorf("archived: %v, want %v", got, tc.archived)
				}
			})
		})
	}
}

// TestConversationSearchVector checks the active conversation's search
// vector, search_vector(c): the summary at weight A and the active turns
// (turns_vector, extended per update and rebuilt on archiving) at weight B.
// It is read as search reads it, by conversation_search_vector of the
// columns (migrations 0041 and 0057), which search_vector(c) returns, and
// which Citus can run on a shard.
func TestConversationSearchVector(t *testing.T) {
	pool := newDatabase(t)

	matches := func(t *testing.T, tx pgx.Tx, a, learner, weights, word string) bool {
		t.Helper()
		return apptest.Scalar[bool](t, tx, `select ts_filter(public.conversation_search_vector(c.summary, c.summary_vector, c.turns_vector), $3::"char"[])
				@@ to_tsquery('english', $4::text)
			from public.conversation_updates c where facilitator_id = $1::uuid and learner_id = $2::uuid`,
			a, learner, weights, word)
	}

	t.Run("summary and turns", func(t *testing.T) {
		a := apptest.NewUser(t, pool).ID
		asService(t, pool, a, func(tx pgx.Tx) {
			learner := createLearner(t, tx, a, "Maya")
			createConversation(t, tx, a, &learner, "")
			postTurns(t, tx, a, &learner,
				turn{"user", "Maya drew a giraffe today."},
				turn{"assistant", "Drawing animals is a lovely way to practise."})
			apptest.Exec(t, tx, `update public.conversation_updates set summary = 'Maya is building a volcano model.'
				where facilitator_id = $1::uuid and learner_id = $2::uuid`, a, learner)

			for _, tc := range []struct {
				weights, word string
				want          bool
			}{
				{"{a,b,c,d}", "giraffe", true},   // only in the turns
				{"{a,b,c,d}", "volcano", true},   // only in the summary
				{"{a,b,c,d}", "elephant", false}, // nowhere
				{"{a}", "volcano", true},
				{"{a}", "giraffe", false},
				{"{b}", "giraffe", true},
				{"{b}", "volcano", false},
			} {
				if got := matches(t, tx, a, learner, tc.weights, tc.word); got != tc.want {
					t.Errorf("ts_filter(search_vector, '%s') @@ %q = %v, want %v", tc.weights, tc.word, got, tc.want)
				}
			}

			// A new summary replaces the old one in the vector.
			apptest.Exec(t, tx, `update public.conversation_updates set summary = 'Maya is reading about rivers.'
				where facilitator_id = $1::uuid and learner_id = $2::uuid`, a, learner)
			if matches(t, tx, a, learner, "{a,b,c,d}", "volcano") {
				t.Error("search_vector still matches the replaced summary")
			}
			if !matches(t, tx, a, learner, "{a}", "river") {
				t.Error("search_vector does not match the new summary at weight A")
			}
		})
	})

	// The vector covers the active segment only: it is computed after
	// auto_archive has moved the old turns out.
	t.Run("archived turns leave the active vector", func(t *testing.T) {
		a := apptest.NewUser(t, pool).ID
		asService(t, pool, a, func(tx pgx.Tx) {
			setArchiveTurns(t, tx, 2)
			learner := createLearner(t, tx, a, "Maya")
			createConversation(t, tx, a, &learner, "Animals.")
			if n := postTurns(t, tx, a, &learner,
				turn{"user", "Maya saw a penguin."},
				turn{"assistant", "Penguins cannot fly."},
				turn{"user", "Then she saw a kangaroo."}); n != 1 {
				t.Fatalf("turn_count = %d, want 1", n)
			}
			if !matches(t, tx, a, learner, "{b}", "kangaroo") {
				t.Error("active vector does not match the active turn")
			}
			if matches(t, tx, a, learner, "{a,b,c,d}", "penguin") {
				t.Error("active vector still matches archived turns")
			}
			if !apptest.Scalar[bool](t, tx, `select search_vector @@ to_tsquery('english', 'penguin')
				from public.conversation_history_archive where facilitator_id = $1::uuid`, a) {
				t.Error("archive vector does not match its turns")
			}
		})
	})
}

// TestArchiveWordsAreItsTurnsStoredWords checks that an archived
// conversation's search words, which a trigger takes from its turns' stored
// words (migration 0063), are what parsing the archive's copy of its turns
// gave before: the same lexemes, each at the same weights as many times,
// for text with repeats, hyphens, apostrophes, numbers and stopwords, and
// again after its summary changes. An import's archive, which holds its
// turns only as the copy, is parsed from the copy.
func TestArchiveWordsAreItsTurnsStoredWords(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	// Each lexeme with its weights and how many times it occurs, of the
	// stored vector and of the vector parsed from the row's copy of its
	// turns as the generated column did.
	const compared = `select (select string_agg(format('%s:%s:%s', u.lexeme, array_length(u.positions, 1), u.weights), ' ' order by u.lexeme)
			from unnest(h.search_vector) u),
		(select string_agg(format('%s:%s:%s', u.lexeme, array_length(u.positions, 1), u.weights), ' ' order by u.lexeme)
			from unnest(setweight(to_tsvector('english', coalesce(h.summary, '')), 'A')
				|| setweight(jsonb_to_tsvector('english', jsonb_path_query_array(h.conversation_turns, '$[*].content'), '["string"]'), 'B')) u)
		from public.conversation_history_archive h where h.facilitator_id = $1::uuid and h.id = $2::uuid`
	same := func(t *testing.T, tx pgx.Tx, archive string) {
		t.Helper()
		var stored, parsed string
		if err := tx.QueryRow(context.Background(), compared, a, archive).Scan(&stored, &parsed); err != nil {
			t.Fatal(err)
		}
		if stored == "" || stored != parsed {
			t.Errorf("the archive's words differ from its turns parsed:\nstored %s\nparsed %s", stored, parsed)
		}
	}
	asService(t, pool, a, func(tx pgx.Tx) {
		setArchiveTurns(t, tx, 4)
		learner := createLearner(t, tx, a, "Maya")
		createConversation(t, tx, a, &learner, "Maya reads every evening.")
		postTurns(t, tx, a, &learner,
			turn{"user", "Maya's reading is going well: she read 3 chapters, reading aloud to her brother."},
			turn{"assistant", "Reading aloud is wonderful! Read-aloud time builds a parent-teacher partnership too."},
			turn{"user", "She doesn't like the long words, the longest ones most of all."},
			turn{"assistant", "Long words get easier; clap the syllables of each word, word by word."},
			turn{"user", "Next week she starts the second book."})
	})
	archive := apptest.Scalar[string](t, pool, `select id::text from public.conversation_history_archive
		where facilitator_id = $1::uuid`, a)
	if apptest.Scalar[bool](t, pool, `select first_turn_id is null from public.conversation_history_archive
		where facilitator_id = $1::uuid`, a) {
		t.Fatal("the archive holds no range of turns; the test needs one")
	}
	asSuperuser(t, pool, func(tx pgx.Tx) {
		same(t, tx, archive)
		apptest.Exec(t, tx, `update public.conversation_history_archive set summary = 'Maya loves dragons and rivers.'
			where facilitator_id = $1::uuid`, a)
		same(t, tx, archive)
		// Imported: the copy alone.
		apptest.Exec(t, tx, `insert into public.conversation_history_archive (id, facilitator_id, summary, conversation_turns, turn_count)
			values ('00000000-0000-0000-0000-0000000000a1', $1::uuid, 'An imported talk.',
				'[{"role": "user", "content": "Sam counted penguins, penguins everywhere."}]', 1)`, a)
		same(t, tx, "00000000-0000-0000-0000-0000000000a1")
	})
}

// TestEraseCascades checks that erasing a learner, then the facilitator,
// removes all their rows without tripping the archiving triggers.
func TestEraseCascades(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	b := seedFacilitator(t, pool, "Noah")
	var maya, sam string
	asService(t, pool, a, func(tx pgx.Tx) {
		setArchiveTurns(t, tx, 2)
		maya = createLearner(t, tx, a, "Maya")
		sam = createLearner(t, tx, a, "Sam")
		for _, learner := range []*string{&maya, &sam, nil} {
			createConversation(t, tx, a, learner, "Some summary.")
			// Five turns over a limit of two: two archive rows and one
			// active turn per conversation.
			if n := postTurns(t, tx, a, learner, numberedTurns(5)...); n != 1 {
				t.Fatalf("turn_count = %d, want 1", n)
			}
		}
	})
	bBefore := make(map[string]string)
	for _, table := range memoryTables {
		bBefore[table] = snapshot(t, pool, table, b.id)
	}
	perLearner := func(t *testing.T, learner *string) map[string]int64 {
		t.Helper()
		counts := map[string]int64{}
		for _, table := range memoryTables[1:4] {
			counts[table] = apptest.Scalar[int64](t, pool, `select count(*) from public.`+table+
				` where facilitator_id = $1::uuid and learner_id is not distinct from $2::uuid`, a, learner)
		}
		return counts
	}
	want := map[string]int64{"conversation_updates": 1, "conversation_turns": 5, "conversation_history_archive": 2}
	for _, learner := range []*string{&maya, &sam, nil} {
		if got := perLearner(t, learner); !maps.Equal(got, want) {
			t.Fatalf("fixture for learner %v: %v, want %v", deref(learner), got, want)
		}
	}

	t.Run("learner", func(t *testing.T) {
		asService(t, pool, a, func(tx pgx.Tx) {
			n, err := tryExec(t, tx, `delete from public.learners where facilitator_id = $1::uuid and id = $2::uuid`, a, maya)
			if err != nil || n != 1 {
				t.Fatalf("A deletes learner Maya: %d rows, error %v", n, err)
			}
		})
		gone := map[string]int64{"conversation_updates": 0, "conversation_turns": 0, "conversation_history_archive": 0}
		if got := perLearner(t, &maya); !maps.Equal(got, gone) {
			t.Errorf("Maya's rows left after erasing her: %v", got)
		}
		for _, learner := range []*string{&sam, nil} {
			if got := perLearner(t, learner); !maps.Equal(got, want) {
				t.Errorf("learner %v's rows changed when Maya was erased: %v, want %v", deref(learner), got, want)
			}
		}
	})

	t.Run("facilitator", func(t *testing.T) {
		n, err := pool.Exec(t.Context(), `delete from auth.users where id = $1::uuid`, a)
		if err != nil || n.RowsAffected() != 1 {
			t.Fatalf("delete A from auth.users: %v rows, error %v", n.RowsAffected(), err)
		}
		for _, table := range memoryTables {
			if n := countRows(t, pool, table, a); n != 0 {
				t.Errorf("%d %s rows left after erasing A", n, table)
			}
			if after := snapshot(t, pool, table, b.id); after != bBefore[table] {
				t.Errorf("B's %s changed when A was erased", table)
			}
		}
	})
}

// TestVocabularyCollectsWords checks the collect_words trigger: alphabetic
// words of four letters or more from each new turn, per facilitator, read
// only by that facilitator.
func TestVocabularyCollectsWords(t *testing.T) {
	pool := newDatabase(t)
	a := apptest.NewUser(t, pool).ID
	b := apptest.NewUser(t, pool).ID

	words := func(t *testing.T, q apptest.DB, facilitatorID string) []string {
		t.Helper()
		return apptest.Column[string](t, q, `select word from public.search_vocabulary
			where facilitator_id = $1::uuid order by word`, facilitatorID)
	}

	asService(t, pool, a, func(tx pgx.Tx) {
		insertTurns(t, tx, a, nil,
			turn{"user", "Quick brown foxes jumped over 42 lazy dogs"},
			turn{"assistant", "The cat x1y2 sat; DOGS nap."})
	})
	asService(t, pool, b, func(tx pgx.Tx) {
		insertTurns(t, tx, b, nil, turn{"user", "Quick thinking, Noah!"})
	})

	wantA := []string{"brown", "dogs", "foxes", "jumped", "lazy", "over", "quick"}
	wantB := []string{"noah", "quick", "thinking"}
	if got := words(t, pool, a); !slices.Equal(got, wantA) {
		t.Errorf("A's vocabulary = %v, want %v", got, wantA)
	}
	if got := words(t, pool, b); !slices.Equal(got, wantB) {
		t.Errorf("B's vocabulary = %v, want %v", got, wantB)
	}

	for _, tc := range []struct {
		name, me, other string
		want            []string
	}{
		{"A", a, b, wantA},
		{"B", b, a, wantB},
	} {
		t.Run("read by "+tc.name, func(t *testing.T) {
			asService(t, pool, tc.me, func(tx pgx.Tx) {
				if got := words(t, tx, tc.me); !slices.Equal(got, tc.want) {
					t.Errorf("own vocabulary = %v, want %v", got, tc.want)
				}
				if got := words(t, tx, tc.other); len(got) != 0 {
					t.Errorf("sees the other facilitator's words %v", got)
				}
				// Only the trigger writes the vocabulary.
				for _, stmt := range []string{
					`insert into public.search_vocabulary (facilitator_id, word) values ($1::uuid, 'planted')`,
					`update public.search_vocabulary set word = 'changed' where facilitator_id = $1::uuid`,
					`delete from public.search_vocabulary where facilitator_id = $1::uuid`,
				} {
					_, err := tryExec(t, tx, stmt, tc.me)
					wantState(t, err, insufficientPrivilege, stmt)
				}
			})
		})
	}
}
