// Package mentor is the domain of Mr. Mentor's memory: the types every other
// package speaks in (a conversation's turns and record, the archive and its
// search, learner memories and their recall, sessions and openings), the
// small interfaces the adapters implement (Store, Summarizer, Extractor,
// Embedder), validation and limits, the rules of a post as pure functions
// (post.go, session.go), and the Service every caller goes through. It
// imports neither Echo nor pgx nor a model client, so the dependencies of
// the service point one way: handlers, the Postgres store and the model
// adapters depend on this package, never on each other.
//
// Words: "memory" in this package always means a learner memory (a typed
// fact about a learner, LearnerMemory); the rolling summary and turns of a
// conversation are its record (ConversationRecord).
package mentor
