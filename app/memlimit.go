package app

import (
	"io/fs"
	"log/slog"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// MemoryLimitPercent is the share of the container's memory that the Go
// runtime is told it may use when GOMEMLIMIT is not set. The rest is for
// what the runtime does not count (the program's code, the kernel's socket
// buffers charged to the container) and for the collector's lag.
const MemoryLimitPercent = 85

// LimitMemory gives the Go runtime a memory limit unless GOMEMLIMIT sets
// one: MemoryLimitPercent of the container's limit (its cgroup's
// memory.max, or memory.limit_in_bytes under cgroup v1), or, where no
// cgroup can be read, of the function's memory that AWS Lambda, and so
// Vercel, names in AWS_LAMBDA_FUNCTION_MEMORY_SIZE. With GOGC at
// ServerGCPercent the heap may grow to five times what is live before a
// collection; near the limit the collector runs as often as it must and
// gives memory back to the system, instead of the kernel killing the
// process. It logs what it chose.
func LimitMemory(getenv func(string) string, log *slog.Logger) {
	limitMemory(getenv, os.DirFS("/"), log)
}

func limitMemory(getenv func(string) string, root fs.FS, log *slog.Logger) {
	if set := getenv("GOMEMLIMIT"); set != "" {
		log.Info("memory limit", "from", "GOMEMLIMIT", "limit", set)
		return
	}
	container, file := containerMemoryLimit(root)
	from := "/" + file
	if container == 0 {
		container, from = functionMemorySize(getenv)
	}
	if container == 0 {
		log.Info("memory limit", "from", "none: no container limit found", "limit", "none")
		return
	}
	limit := container / 100 * MemoryLimitPercent
	debug.SetMemoryLimit(limit)
	log.Info("memory limit", "from", from, "container_bytes", container, "limit_bytes", limit)
}

// containerMemoryLimit is the smallest memory limit of this process's
// cgroup and the cgroups above it, read from root's proc/self/cgroup and
// sys/fs/cgroup, and the file it was read from; 0 when there is none.
// Inside a container the process's own cgroup is usually the mount's
// root, which the walk up reaches too.
func containerMemoryLimit(root fs.FS) (limit int64, file string) {
	membership, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0, ""
	}
	for _, line := range strings.Split(string(membership), "\n") {
		// hierarchy-id:controllers:path; cgroup v2 is "0::path".
		fields := strings.SplitN(line, ":", 3)
		if len(fields) != 3 {
			continue
		}
		mount, name := "", ""
		switch {
		case fields[0] == "0" && fields[1] == "":
			mount, name = "sys/fs/cgroup", "memory.max"
		case hasController(fields[1], "memory"):
			mount, name = "sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for dir := path.Clean("/" + fields[2]); ; dir = path.Dir(dir) {
			f := path.Join(mount, dir, name)
			if n := readLimit(root, f); n > 0 && (limit == 0 || n < limit) {
				limit, file = n, f
			}
			if dir == "/" {
				break
			}
		}
	}
	return limit, file
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// noLimit is where cgroup v1 says "unlimited": it writes the largest
// page-aligned number instead of "max".
const noLimit = 1 << 62

// readLimit is the limit in a cgroup file; 0 when the file is missing or
// sets none.
func readLimit(root fs.FS, file string) int64 {
	raw, err := fs.ReadFile(root, file)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0
	}
	return n
}

// functionMemorySize is the memory of a Lambda (or Vercel) function, from
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE in MB, and the variable's name; 0 when
// it is unset or unreadable.
func functionMemorySize(getenv func(string) string) (limit int64, from string) {
	const name = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
	mb, err := strconv.ParseInt(strings.TrimSpace(getenv(name)), 10, 64)
	if err != nil || mb <= 0 || mb >= noLimit>>20 {
		return 0, ""
	}
	return mb << 20, name
}
