// Package sql embeds the forward-only migrations that build the database:
// a faithful copy of Supabase's auth surface for plain Postgres, and the
// conversation-memory schema with its row-level security and triggers.
package sql

import "embed"

// Migrations holds migrations/NNNN_name.sql, applied in file-name order.
//
//go:embed migrations/*.sql
var Migrations embed.FS
