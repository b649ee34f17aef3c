package bench

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The settings of the three commands, as cmd/bench reads them from its
// flags, and what each accepts.

// LoadConfig is what `bench load` loads: the conversations, the heavy
// tenants beside them, then the learner memories (none when
// Memories.PerLearner is 0).
type LoadConfig struct {
	DatabaseURL string
	Shape       Shape
	Heavy       HeavyShape
	Memories    MemoryShape
	Workers     int // concurrent loading connections
	Batch       int // facilitators per transaction
}

func (c LoadConfig) validate() error {
	if err := c.Shape.validate(); err != nil {
		return err
	}
	if err := c.Heavy.validate(); err != nil {
		return err
	}
	if c.Memories.PerLearner > 0 {
		return c.memories().validate()
	}
	return nil
}

// memories is the memory data set, in the conversations it is loaded into.
func (c LoadConfig) memories() MemoryShape {
	m := c.Memories
	m.conversations = c.Shape
	return m
}

// The per-route run's defaults: each route warms up, then is measured, for
// at most this long.
const (
	DefaultDuration = 20 * time.Second
	DefaultWarmup   = 3 * time.Second
)

// RunConfig is what `bench run` measures, and how.
type RunConfig struct {
	DatabaseURL    string
	Concurrency    int
	Duration       time.Duration
	Requests       int
	Warmup         time.Duration
	WarmupRequests int
	Archiving      int
	Out            string
	ServerLog      string
	Seed           uint64
	Routes         string // comma-separated route keys; empty: all
	CPUProfile     string
}

func (c RunConfig) validate() error {
	if c.Concurrency < 1 || c.Requests < 1 || c.Duration <= 0 {
		return errors.New("-concurrency, -requests and -duration must be positive")
	}
	return nil
}

// The modes of the clients run: the offline summarizer, or a fake model
// that answers after ClientsConfig.ModelLatency.
const (
	OfflineMode = "offline"
	ModelMode   = "model"
)

// ClientsConfig is what `bench clients` runs, and how.
type ClientsConfig struct {
	DatabaseURL  string
	Clients      int
	Duration     time.Duration // per mode
	ThinkMin     time.Duration
	ThinkMax     time.Duration
	Modes        string // comma-separated: offline, model
	ModelLatency time.Duration
	Out          string
	ServerLog    string
	Seed         uint64
}

func (c ClientsConfig) validate() error {
	switch {
	case c.Clients < 1 || c.Duration <= 0 || c.ModelLatency <= 0:
		return errors.New("-clients, -duration and -model-latency must be positive")
	case c.ThinkMin <= 0 || c.ThinkMax < c.ThinkMin:
		// A think time above zero is also what bounds the requests.
		return errors.New("-think-min must be positive and at most -think-max")
	case c.ModelLatency <= maxTransaction && slices.Contains(c.modes(), ModelMode):
		return fmt.Errorf("-model-latency must be above %s, or a model call inside a transaction would go unnoticed", maxTransaction)
	}
	for _, m := range c.modes() {
		if m != OfflineMode && m != ModelMode {
			return fmt.Errorf("-modes: unknown mode %q (want %s, %s or both)", m, OfflineMode, ModelMode)
		}
	}
	return nil
}

func (c ClientsConfig) modes() []string {
	return strings.Split(c.Modes, ",")
}

// serverLog is the app's request log of one mode: its name before the
// extension, so the second mode does not overwrite the first one's.
func (c ClientsConfig) serverLog(mode string) string {
	ext := filepath.Ext(c.ServerLog)
	return strings.TrimSuffix(c.ServerLog, ext) + "-" + mode + ext
}
