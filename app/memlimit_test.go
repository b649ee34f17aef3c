package app

import (
	"bytes"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

func TestContainerMemoryLimitIsReadFromTheCgroup(t *testing.T) {
	const unlimitedV1 = "9223372036854771712\n"
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  int64
		from  string
	}{
		{"cgroup v2 container", fstest.MapFS{
			"proc/self/cgroup":         {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("536870912\n")},
		}, 512 << 20, "sys/fs/cgroup/memory.max"},
		{"cgroup v2 without a limit", fstest.MapFS{
			"proc/self/cgroup":         {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("max\n")},
		}, 0, ""},
		{"cgroup v2, the limit on the pod above the container", fstest.MapFS{
			"proc/self/cgroup":                            {Data: []byte("0::/kubepods/pod1/ctr\n")},
			"sys/fs/cgroup/kubepods/pod1/ctr/memory.max":  {Data: []byte("max\n")},
			"sys/fs/cgroup/kubepods/pod1/memory.max":      {Data: []byte("1073741824\n")},
			"sys/fs/cgroup/kubepods/memory.max":           {Data: []byte("8589934592\n")},
			"sys/fs/cgroup/kubepods/pod1/ctr/memory.high": {Data: []byte("1\n")},
		}, 1 << 30, "sys/fs/cgroup/kubepods/pod1/memory.max"},
		{"cgroup v1, the process's own group limited", fstest.MapFS{
			"proc/self/cgroup":                                            {Data: []byte("9:name=systemd:/\n4:memory:/process_api/d91a\n1:cpu:/\n0::/\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                  {Data: []byte(unlimitedV1)},
			"sys/fs/cgroup/memory/process_api/d91a/memory.limit_in_bytes": {Data: []byte("268435456\n")},
		}, 256 << 20, "sys/fs/cgroup/memory/process_api/d91a/memory.limit_in_bytes"},
		{"cgroup v1 container, which sees its group as the mount's root", fstest.MapFS{
			"proc/self/cgroup":                           {Data: []byte("5:cpuacct,memory:/docker/4f2a\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("268435456\n")},
		}, 256 << 20, "sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"cgroup v1 without a limit", fstest.MapFS{
			"proc/self/cgroup":                           {Data: []byte("4:memory:/\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte(unlimitedV1)},
		}, 0, ""},
		{"no cgroup at all", fstest.MapFS{}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from := containerMemoryLimit(tc.files)
			if got != tc.want || from != tc.from {
				t.Fatalf("limit %d from %q, want %d from %q", got, from, tc.want, tc.from)
			}
		})
	}
}

func TestLimitMemoryAppliesAShareOfTheContainerUnlessGOMEMLIMITIsSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	container := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("1000000000\n")},
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))

	limitMemory(func(string) string { return "" }, container, logger)
	if got := debug.SetMemoryLimit(-1); got != 850_000_000 {
		t.Fatalf("memory limit %d, want %d%% of the container's 1000000000", got, MemoryLimitPercent)
	}
	if !strings.Contains(log.String(), "limit_bytes=850000000") || !strings.Contains(log.String(), "/sys/fs/cgroup/memory.max") {
		t.Fatalf("the log does not say what was chosen and why: %s", log.String())
	}

	debug.SetMemoryLimit(math.MaxInt64)
	limitMemory(func(name string) string {
		if name == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}, container, logger)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set, the limit was changed to %d; the runtime's own reading of GOMEMLIMIT must win", got)
	}
}

// Where no cgroup can be read, as in a Lambda or Vercel function, the
// function's memory size is the container's limit.
func TestLimitMemoryUsesTheFunctionsMemorySizeWithoutACgroup(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	var log bytes.Buffer
	limitMemory(func(name string) string {
		if name == "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" {
			return "1024"
		}
		return ""
	}, fstest.MapFS{}, slog.New(slog.NewTextHandler(&log, nil)))
	if got, want := debug.SetMemoryLimit(-1), int64(1024<<20)/100*MemoryLimitPercent; got != want {
		t.Fatalf("memory limit %d, want %d (%d%% of 1024 MB)", got, want, MemoryLimitPercent)
	}
	if !strings.Contains(log.String(), "from=AWS_LAMBDA_FUNCTION_MEMORY_SIZE") {
		t.Fatalf("the log does not say where the limit came from: %s", log.String())
	}

	debug.SetMemoryLimit(math.MaxInt64)
	limitMemory(func(string) string { return "" }, fstest.MapFS{}, slog.New(slog.NewTextHandler(&log, nil)))
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with neither a cgroup nor a function size, the limit was set to %d", got)
	}
}
