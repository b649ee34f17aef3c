package apptest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"mentormemory/auth"
	"mentormemory/mentor"
)

// DB is a superuser's hold on a test database, to set up what the API
// cannot and to check what was stored: a pool, a connection or a
// transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// User is a facilitator who signed up, with an access token the service
// accepts for an hour.
type User struct {
	ID    string
	Email string
	Token string // HS256, signed with Secret
}

// NewUser signs a facilitator up: a row in auth.users as Supabase Auth
// writes it, and an access token.
func NewUser(tb testing.TB, db DB) User {
	tb.Helper()
	id := uuid.NewString()
	u := User{ID: id, Email: id + "@example.com"}
	Exec(tb, db, `insert into auth.users (id, aud, role, email, created_at, updated_at)
		values ($1::uuid, 'authenticated', 'authenticated', $2, now(), now())`, u.ID, u.Email)
	token, err := auth.MintHS256(Secret, u.ID, u.Email, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	u.Token = token
	return u
}

// Claims are the claims of a facilitator's access token that the database
// reads (auth.uid(), auth.role()), as the store sets them in
// request.jwt.claims.
func Claims(userID string) json.RawMessage {
	claims, _ := json.Marshal(map[string]string{"sub": userID, "role": "authenticated", "aud": "authenticated"})
	return claims
}

// Caller is u as the service knows a verified caller, for tests that call
// the memory service without HTTP.
func (u User) Caller() mentor.Caller {
	return mentor.Caller{UserID: u.ID, Email: u.Email, Claims: Claims(u.ID)}
}

// NewLearner adds a learner of u's, as superuser, and returns its id.
func NewLearner(tb testing.TB, db DB, u User, name string) string {
	tb.Helper()
	return Scalar[string](tb, db, `insert into public.learners (facilitator_id, name)
		values ($1::uuid, $2) returning id::text`, u.ID, name)
}

// Exec runs a statement that must succeed and returns the number of rows it
// affected.
func Exec(tb testing.TB, db DB, sql string, args ...any) int64 {
	tb.Helper()
	tag, err := db.Exec(context.Background(), sql, args...)
	if err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// Scalar is the one value that a query which must succeed returns.
func Scalar[T any](tb testing.TB, db DB, sql string, args ...any) T {
	tb.Helper()
	var v T
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return v
}

// Column is the one column of the rows a query that must succeed returns.
func Column[T any](tb testing.TB, db DB, sql string, args ...any) []T {
	tb.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	values, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return values
}

// Count is the number a counting query returns.
func Count(tb testing.TB, db DB, sql string, args ...any) int {
	tb.Helper()
	return Scalar[int](tb, db, sql, args...)
}

// NewUser signs a facilitator up on the service's database.
func (s *Service) NewUser(tb testing.TB) User {
	tb.Helper()
	return NewUser(tb, s.Pool)
}

// Exec runs a statement on the service's database as superuser, for what
// the API cannot do, such as time passing.
func (s *Service) Exec(tb testing.TB, sql string, args ...any) int64 {
	tb.Helper()
	return Exec(tb, s.Pool, sql, args...)
}

// Count runs a counting query on the service's database as superuser.
func (s *Service) Count(tb testing.TB, sql string, args ...any) int {
	tb.Helper()
	return Count(tb, s.Pool, sql, args...)
}
