// Package memory holds the domain of the mentor's conversation memory: the
// types every other package speaks in, the small interfaces the adapters
// implement, and the error type the HTTP layer renders. It imports neither
// Echo nor pgx, so the dependencies of the service point one way: handlers,
// the Postgres store and the summarizers all depend on this package, never on
// each other.
package memory
