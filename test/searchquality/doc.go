// Package searchquality is a labelled benchmark for conversation search.
//
// The product requirement is measured on a held-out benchmark we cannot see:
// long multi-session histories, each session posted two turns at a time and
// then cleared into the archive, and natural-language questions whose answer
// sits in one session; the metric is recall@5 of that session. This package
// builds a stand-in we can tune on:
//
//   - Generate writes deterministic histories (fixed seed, no network, no
//     model) for a few facilitators, with facts stated once each, distractor
//     sessions on the same topics and the vocabulary every session shares;
//   - every question is labelled with the session holding its answer and a
//     kind (paraphrase, synonym, name, typo, temporal, stopwords, sample) so
//     misses can be read per failure mode;
//   - every session is held at a time its turns carry, and dated questions
//     name that time (dates.go), scored apart from the others;
//   - when questions ask when something happened ("When did Max break his
//     wrist?"), of a copy of each account with sessions that tell events
//     with their time and others that mention them without it (when.go),
//     also scored apart;
//   - the hand-written transcripts of simulator/samples are folded in as
//     extra sessions when present (LoadSamples).
//
// quality_test.go loads the data through the real HTTP API exactly as the
// benchmark does and compares the service with a plain BM25 over turns.
package searchquality
