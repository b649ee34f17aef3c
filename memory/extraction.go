package memory

import "context"

// ExtractionRequest is one exchange to learn from.
type ExtractionRequest struct {
	LearnerName string // "" for the general conversation
	// Turns is the new exchange, oldest first: usually the facilitator's
	// message and the mentor's reply.
	Turns []Turn
	// Known are memories already held about the learner, so the model can
	// skip what is known and word repeats the same way.
	Known []LearnerMemory
}

// Extractor finds what is worth remembering in an exchange. It returns
// memories with Type, Content, Importance, Confidence and Metadata set,
// usually none; the caller validates them and fills in the rest.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, req ExtractionRequest) ([]NewMemory, error)
}
