package mentor_test

import (
	"context"
	"math"
	"testing"

	"mentormemory/mentor"
)

// A write position reads back as it was written, in Postgres's own
// notation, and nothing else reads as one.
func TestAWritePositionReadsBackAsItWasWritten(t *testing.T) {
	for _, p := range []mentor.WritePosition{0, 1, 0x16B3748, 0x1_0000_0000, 0x16_B374D848, math.MaxUint64} {
		written := p.String()
		read, err := mentor.ParseWritePosition(written)
		if err != nil || read != p {
			t.Errorf("%d written as %q reads back as %d, %v", p, written, read, err)
		}
	}
	if got := mentor.WritePosition(0x16_B374D848).String(); got != "16/B374D848" {
		t.Errorf("written as %q, want Postgres's 16/B374D848", got)
	}
	for _, bad := range []string{"", "/", "1", "1/", "/1", "1/2/3", "+1/1", "-1/1", "0x1/1", "1_0/1", "g/1", "1 /1",
		"100000000/1", "1/100000000"} {
		if p, err := mentor.ParseWritePosition(bad); err == nil {
			t.Errorf("%q read as the position %d", bad, p)
		}
	}
}

// A request's answer names the furthest of its writes, whichever order
// they note it in; outside a request nothing is noted.
func TestARequestNamesTheFurthestOfItsWrites(t *testing.T) {
	ctx, written := mentor.WithConsistency(context.Background(), 7)
	if mentor.ReadAfter(ctx) != 7 {
		t.Errorf("the request reads after %d, want 7", mentor.ReadAfter(ctx))
	}
	if _, wrote := written(); wrote {
		t.Error("a request that wrote nothing names a position")
	}
	for _, p := range []mentor.WritePosition{30, 50, 40} {
		mentor.Wrote(ctx, p)
	}
	if at, wrote := written(); !wrote || at != 50 {
		t.Errorf("the request names %d (%v), want 50", at, wrote)
	}
	mentor.Wrote(context.Background(), 60) // nothing to note it in
	if mentor.ReadAfter(context.Background()) != 0 {
		t.Error("outside a request, reads need a position")
	}
}
