// Package extractor holds implementations of mentor.Extractor.
//
// OpenAI asks a chat-completions model (OpenAI or any compatible server)
// for the facts worth remembering about a learner in one exchange, with a
// strict JSON schema as the response format, and checks the reply in Go:
// the reply as a whole must have the schema's shape or nothing from it is
// used; single memories the service would reject are dropped. The model is
// shown placeholders for the names and contact details in the exchange and
// the known memories, and the memories get the real values back (see
// package privacy).
//
// Fixture replays extractions recorded by a Recorder, so tests and offline
// runs get the same memories for the same exchange without a model.
package extractor
