package migrations

import "strings"

// ArchiveOf is public.archive_of(turn) (migration 0037) written into a
// statement: the id of the archived conversation that the turn named turn,
// an alias of public.conversation_turns in the statement, belongs to, or
// null while it is active. On Citus a statement of one facilitator runs on
// the worker holding their shards, where the function cannot: a function
// of the table's row does not take the shard's row, and a function that
// reads another table may not do so from a query on a shard. The service's
// statements, and the tests that must hold on Citus, use this instead;
// TestArchiveOfIsTheFunction holds the two to one meaning.
func ArchiveOf(turn string) string {
	return strings.NewReplacer("$turn", turn).Replace(`coalesce($turn.archive_id, (
		select a.id from (
			select h.id, h.first_turn_id from public.conversation_history_archive h
			where h.facilitator_id = $turn.facilitator_id and h.last_turn_id >= $turn.id
				and coalesce(h.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
					= coalesce($turn.learner_id, '00000000-0000-0000-0000-000000000000'::uuid)
			order by h.last_turn_id
			limit 1) a
		where a.first_turn_id <= $turn.id))`)
}
