package mentor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// An account archive is JSON Lines: one JSON object a line, each with a
// "type". The first line names the format, its version, the scope and the
// time; then come the records, in an order where a record only refers to
// records above it (learners, sessions, conversations, archived
// conversations, turns, memories, memory history, session openings,
// profiles, consolidation runs); the last line counts the records, so a
// file cut short is told from a whole one.
const (
	ArchiveFormat  = "mentormemory-archive"
	ArchiveVersion = 1
)

// The types of an archive's lines besides the records' (ExportRecord.Type).
const (
	ArchiveHeaderType = "archive"
	ArchiveEndType    = "end"
	// ArchiveErrorType ends an archive whose export failed after its first
	// line was sent: the status can no longer say so.
	ArchiveErrorType = "error"
)

// ProfileRecordType is the type of a learner profile's record, which the
// export completes with the profile as Markdown.
const ProfileRecordType = "learner_profile"

// ExportRecord is one record of an account archive: its type and its
// fields, one JSON object. Fields is only valid during the call it is given
// to.
type ExportRecord struct {
	Type   string
	Fields []byte
}

// archiveHeader is the first line of an archive.
type archiveHeader struct {
	Type       string    `json:"type"`
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	Scope      string    `json:"scope"` // "account" or "learner"
	LearnerID  *string   `json:"learner_id,omitempty"`
	ExportedAt time.Time `json:"exported_at"`
}

// Export writes the caller's archive, of every learner or of one, a line
// at a time to write, which gets each line without its newline. Nothing
// is written when the learner is not the caller's; a failure after the
// first line ends the archive with an error line (the status was sent
// already) and is returned too.
func (s *Service) Export(ctx context.Context, learnerID *string, write func(line []byte) error) error {
	header := archiveHeader{Type: ArchiveHeaderType, Format: ArchiveFormat, Version: ArchiveVersion,
		Scope: "account", LearnerID: learnerID, ExportedAt: time.Now().UTC()}
	if learnerID != nil {
		header.Scope = "learner"
	}
	started := false
	records := 0
	var line bytes.Buffer
	err := s.store.Export(ctx, learnerID, func(r ExportRecord) error {
		if !started {
			// Written with the first record, after the store has checked the
			// learner, so a refusal is still an ordinary error answer.
			started = true
			if err := writeJSONLine(write, header); err != nil {
				return err
			}
		}
		records++
		line.Reset()
		if err := recordLine(&line, r); err != nil {
			return err
		}
		return write(line.Bytes())
	})
	if err == nil && !started {
		started = true
		err = writeJSONLine(write, header)
	}
	if err != nil {
		if started {
			_ = writeJSONLine(write, struct {
				Type  string `json:"type"`
				Error string `json:"error"`
			}{ArchiveErrorType, "The export failed; try again"})
		}
		return err
	}
	return writeJSONLine(write, struct {
		Type    string `json:"type"`
		Records int    `json:"records"`
	}{ArchiveEndType, records})
}

// recordLine writes r as one line: its type first, then its fields, and for
// a profile its Markdown.
func recordLine(line *bytes.Buffer, r ExportRecord) error {
	fields := bytes.TrimSpace(r.Fields)
	if len(fields) < 2 || fields[0] != '{' {
		return fmt.Errorf("export: a %s record is not a JSON object", r.Type)
	}
	typ, _ := json.Marshal(r.Type)
	line.WriteString(`{"type":`)
	line.Write(typ)
	body := fields[1 : len(fields)-1]
	if len(bytes.TrimSpace(body)) > 0 {
		line.WriteByte(',')
		line.Write(body)
	}
	if r.Type == ProfileRecordType {
		var p Profile
		if err := json.Unmarshal(fields, &p); err != nil {
			return fmt.Errorf("export: a profile record: %w", err)
		}
		markdown, _ := json.Marshal(p.Markdown())
		line.WriteString(`,"markdown":`)
		line.Write(markdown)
	}
	line.WriteByte('}')
	return nil
}

func writeJSONLine(write func([]byte) error, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return write(line)
}
