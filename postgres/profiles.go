package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"mentormemory/mentor"
)

// Profile reads the learner's profile; one never built has no lines.
func (s *Store) Profile(ctx context.Context, learnerID string) (mentor.Profile, error) {
	var p mentor.Profile
	err := s.readInTx(ctx, func(tx pgx.Tx, me string) error {
		name, err := requireLearner(ctx, tx, me, &learnerID)
		if err != nil {
			return err
		}
		p, err = readProfile(ctx, tx, me, learnerID, name)
		return err
	})
	return p, err
}

// SaveProfile stores the learner's profile as given (a facilitator's own
// lines changed) and returns it.
func (s *Store) SaveProfile(ctx context.Context, p mentor.Profile) error {
	return s.inTx(ctx, func(tx pgx.Tx, me string) error {
		if _, err := requireLearner(ctx, tx, me, &p.LearnerID); err != nil {
			return err
		}
		_, err := saveProfile(ctx, tx, me, p)
		return err
	})
}

// readProfile reads the learner's stored profile, or an empty one.
func readProfile(ctx context.Context, tx pgx.Tx, me, learnerID, name string) (mentor.Profile, error) {
	p := mentor.Profile{LearnerID: learnerID, LearnerName: name, Lines: []mentor.ProfileLine{}, Dropped: []mentor.DroppedLine{},
		Digest: mentor.NoDigest()}
	var lines, dropped, digest []byte
	err := tx.QueryRow(ctx, `select lines, tokens, dropped, digest, updated_at from public.learner_profiles
		where facilitator_id = $1::uuid and learner_id = $2::uuid`, me, learnerID).Scan(&lines, &p.Tokens, &dropped, &digest, &p.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(lines, &p.Lines); err != nil {
		return p, err
	}
	if err := json.Unmarshal(digest, &p.Digest); err != nil {
		return p, err
	}
	return p, json.Unmarshal(dropped, &p.Dropped)
}

// saveProfile writes the profile and returns the tokens of the one it
// replaced, if any.
func saveProfile(ctx context.Context, tx pgx.Tx, me string, p mentor.Profile) (*int, error) {
	lines, err := json.Marshal(p.Lines)
	if err != nil {
		return nil, err
	}
	own, err := json.Marshal(p.OwnLines())
	if err != nil {
		return nil, err
	}
	dropped, err := json.Marshal(p.Dropped)
	if err != nil {
		return nil, err
	}
	digest, err := json.Marshal(p.Digest)
	if err != nil {
		return nil, err
	}
	var before *int
	err = tx.QueryRow(ctx, `
		with old as (
			select tokens from public.learner_profiles where facilitator_id = $1::uuid and learner_id = $2::uuid for update
		),
		saved as (
			insert into public.learner_profiles (facilitator_id, learner_id, lines, own_lines, tokens, dropped, digest, digest_tokens, updated_at)
			values ($1::uuid, $2::uuid, $3::jsonb, $4::jsonb, $5, $6::jsonb, $8::jsonb, $9, $7)
			on conflict (facilitator_id, learner_id) do update set lines = excluded.lines, own_lines = excluded.own_lines,
				tokens = excluded.tokens, dropped = excluded.dropped, digest = excluded.digest,
				digest_tokens = excluded.digest_tokens, updated_at = excluded.updated_at
		)
		select (select tokens from old)`,
		me, p.LearnerID, string(lines), string(own), p.Tokens, string(dropped), updatedAt(p), string(digest), p.Digest.Tokens).Scan(&before)
	return before, err
}

func updatedAt(p mentor.Profile) time.Time {
	if p.UpdatedAt.IsZero() {
		return time.Now()
	}
	return p.UpdatedAt
}
