package app

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCAppliesTheServerSettingUnlessGOGCIsSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	TuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != ServerGCPercent {
		t.Fatalf("without GOGC the GC percent is %d, want %d", got, ServerGCPercent)
	}

	TuneGC(func(key string) string {
		if key == "GOGC" {
			return "50"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set, TuneGC changed the GC percent to %d; the runtime's own reading of GOGC must win", got)
	}
}
