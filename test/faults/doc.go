// Package faults proves that the memory service loses nothing it accepted
// when the ground moves under it. Each test breaks a real part, never a mock:
//
//   - The database stops while facilitators keep posting: every answer is a
//     503 JSON error the client can retry (never a 500, never a hang), the
//     service reconnects by itself when the database is back, every
//     acknowledged turn is stored exactly once, and resending the rest
//     stores each of them once.
//   - The server process is killed (SIGKILL) in the middle of a burst of
//     posts: after a restart every acknowledged turn is there, and resending
//     everything stores each turn exactly once with exact turn counts.
//   - The server is asked to stop (SIGTERM) while requests and a background
//     memory extraction are in flight: it refuses new connections, finishes
//     the requests and the extraction, exits with status 0, and the next
//     start picks up the extractions still queued.
//   - The read replica (a streaming hot standby of a primary of the test's
//     own) stops replaying, lags past the bound, stops, or freezes in the
//     middle of a read: a facilitator still reads their own writes at
//     once, on the server instance that wrote them and, with the
//     consistency token the write's answer carried, on any other; every
//     read is answered (by the primary), and reads return to the standby
//     when it is back.
//
// The tests need PostgreSQL: its server binaries for a private cluster that
// the restart test may stop at will, and DATABASE_URL for the others. Without
// them the tests skip, except under CI=true, where they fail. The private
// clusters and server processes listen on ports of apptest.Port: below the
// kernel's ephemeral range, which nothing takes for an outgoing connection,
// or, on a machine whose servers each keep to ports of their own, in
// TEST_PORTS ("54371-54379").
package faults
