// Package migrations embeds the forward-only migrations that build the
// database: a faithful copy of Supabase's auth surface for plain Postgres,
// and the memory's schema with its row-level security and triggers.
package migrations

import "embed"

// Files holds NNNN_name.sql, applied in file-name order.
//
//go:embed *.sql
var Files embed.FS
