package mentor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
)

// ArchiveLine is one record of an archive being imported: its line number,
// its type and the whole line, a JSON object. Line is only valid until the
// next line is read.
type ArchiveLine struct {
	N    int
	Type string
	Line []byte
}

// ImportCount is what an import did with the records of one type.
type ImportCount struct {
	Imported int `json:"imported"`
	Existing int `json:"existing"` // already there: imported before
	// Skipped are records an import leaves out: the erasure receipts,
	// which tell what was erased in the old account.
	Skipped int `json:"skipped,omitempty"`
}

// ErasureRecordType is the type of an erasure receipt's record in an
// archive.
const ErasureRecordType = "erasure_receipt"

// MaxArchiveLineBytes bounds one line of an archive: the largest record,
// an archived conversation of 50 turns of up to 4,000 characters each, is
// under 1 MB.
const MaxArchiveLineBytes = 4 << 20

// Import stores an archive (ArchiveFormat) read from r in the caller's
// account, in one transaction: all of it, or nothing when a line is bad,
// with the line's number in the error. Records imported before are found,
// not stored twice.
func (s *Service) Import(ctx context.Context, r io.Reader) (map[string]ImportCount, error) {
	lines := &archiveReader{scanner: bufio.NewScanner(r)}
	lines.scanner.Buffer(make([]byte, 0, 64<<10), MaxArchiveLineBytes)
	return s.store.Import(ctx, lines.next)
}

// archiveReader reads an archive's records a line at a time, checking the
// first line (the format and version) and the last (the count of records,
// which tells a whole archive from one cut short).
type archiveReader struct {
	scanner *bufio.Scanner
	n       int
	records int
	ended   bool
}

// next returns the next record, io.EOF after the end line, or a CodeInvalid
// error naming the line.
func (a *archiveReader) next() (ArchiveLine, error) {
	for {
		if !a.scanner.Scan() {
			err := a.scanner.Err()
			switch {
			case errors.Is(err, bufio.ErrTooLong):
				return ArchiveLine{}, Errorf(CodeInvalid, "A line is longer than %d bytes (line %d)", MaxArchiveLineBytes, a.n+1)
			case err != nil:
				return ArchiveLine{}, err
			case a.n == 0:
				return ArchiveLine{}, Errorf(CodeInvalid, "The archive is empty (line 1)")
			case !a.ended:
				return ArchiveLine{}, Errorf(CodeInvalid, "The archive is cut short: no end line (line %d)", a.n+1)
			}
			return ArchiveLine{}, io.EOF
		}
		a.n++
		line := bytes.TrimSpace(a.scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		if a.ended {
			return ArchiveLine{}, Errorf(CodeInvalid, "Nothing may follow the end line (line %d)", a.n)
		}
		var head struct {
			Type    string `json:"type"`
			Format  string `json:"format"`
			Version int    `json:"version"`
			Records int    `json:"records"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return ArchiveLine{}, Errorf(CodeInvalid, "Not a JSON object (line %d)", a.n)
		}
		switch {
		case a.n == 1 && (head.Type != ArchiveHeaderType || head.Format != ArchiveFormat):
			return ArchiveLine{}, Errorf(CodeInvalid, "The first line must name the format %s (line 1)", ArchiveFormat)
		case a.n == 1 && head.Version != ArchiveVersion:
			return ArchiveLine{}, Errorf(CodeInvalid, "Version %d of the archive is not supported, only %d (line 1)", head.Version, ArchiveVersion)
		case a.n == 1:
			continue
		case head.Type == ArchiveHeaderType:
			return ArchiveLine{}, Errorf(CodeInvalid, "A second first line (line %d)", a.n)
		case head.Type == ArchiveErrorType:
			return ArchiveLine{}, Errorf(CodeInvalid, "The archive records a failed export; export again (line %d)", a.n)
		case head.Type == ArchiveEndType:
			if head.Records != a.records {
				return ArchiveLine{}, Errorf(CodeInvalid, "The end line counts %d records, the archive holds %d (line %d)", head.Records, a.records, a.n)
			}
			a.ended = true
			continue
		}
		a.records++
		return ArchiveLine{N: a.n, Type: head.Type, Line: line}, nil
	}
}
