// Package summarizer holds the two implementations of mentor.Summarizer.
//
// OpenAI asks a chat-completions model (OpenAI or any compatible server) to
// write or update the rolling summary; the model is shown placeholders for
// the names and contact details in the turns and the summary so far, and
// the summary gets the real values back (see package privacy). Offline is
// the fallback used when no model key is configured: it extracts the most
// informative sentences from the turns, deterministically and without
// touching the network, so the service still keeps a useful memory on a
// machine with no model access; it needs no masking.
//
// Both keep every summary within mentor.SummaryMaxWords words, counted with
// strings.Fields exactly as the memory service counts them.
package summarizer
