package app

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mentormemory/auth"
	"mentormemory/handlers"
)

// The demo facilitator and learners that `server demo` creates for a local
// run (scripts/dev.sh), and that dev sign-in signs in as. Their ids are
// fixed so that a second run finds them, and tests and examples can name
// them.
const (
	DemoFacilitatorID    = "11111111-1111-4111-8111-111111111111"
	DemoFacilitatorEmail = "dana@example.com"
	DemoEmmaID           = "22222222-2222-4222-8222-222222222201"
	DemoMaxID            = "22222222-2222-4222-8222-222222222202"
)

// DemoTokenTTL is how long a dev sign-in token lasts.
const DemoTokenTTL = 24 * time.Hour

// SeedDemo creates the demo facilitator with learners Emma and Max unless
// they exist. It writes as the database's owner: the facilitator is a user
// of the auth schema, which no request may create.
func SeedDemo(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into auth.users (id, email) values ($1::uuid, $2) on conflict do nothing`,
			DemoFacilitatorID, DemoFacilitatorEmail); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `insert into public.learners (id, facilitator_id, name)
			values ($2::uuid, $1::uuid, 'Emma'), ($3::uuid, $1::uuid, 'Max') on conflict do nothing`,
			DemoFacilitatorID, DemoEmmaID, DemoMaxID)
		return err
	})
}

// demoTokens mints dev sign-in tokens for the demo facilitator; it keeps
// the signing secret away from the HTTP layer.
type demoTokens struct{ secret string }

func (d demoTokens) MintDevToken(email string) (handlers.DevToken, error) {
	if email == "" {
		email = DemoFacilitatorEmail
	}
	expires := time.Now().Add(DemoTokenTTL)
	token, err := auth.MintHS256(d.secret, DemoFacilitatorID, email, DemoTokenTTL)
	return handlers.DevToken{Token: token, UserID: DemoFacilitatorID, Email: email, ExpiresAt: expires}, err
}
