package apptest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// heldPorts are the ports Port gave to tests of this process that have
// not ended yet, whose server may be stopped for a while: another test
// must not take one meanwhile.
var heldPorts = struct {
	sync.Mutex
	held map[int]bool
}{held: map[int]bool{}}

// Port is a TCP port on 127.0.0.1 for a server the test starts itself (a
// private cluster, the server binary), held until the test ends. It is
// never one of the kernel's ephemeral ports: every outgoing connection of
// the suites running beside this one takes one of those, so a port chosen
// free there could be taken between the choice and the server's start, or
// while the server is stopped ("Address already in use"). The ports are
// TEST_PORTS ("54371-54379", for a machine whose servers each keep to
// ports of their own) or the thousand below the ephemeral range; the
// search starts at a random one of them, so that test processes running
// at once rarely try the same, and takes the first that nothing listens
// on and no test of this process holds.
func Port(tb testing.TB) int {
	tb.Helper()
	low, high := portRange(tb)
	heldPorts.Lock()
	defer heldPorts.Unlock()
	size := high - low + 1
	start := rand.IntN(size)
	for i := range size {
		port := low + (start+i)%size
		if heldPorts.held[port] || listening(port) {
			continue
		}
		heldPorts.held[port] = true
		tb.Cleanup(func() {
			heldPorts.Lock()
			defer heldPorts.Unlock()
			delete(heldPorts.held, port)
		})
		return port
	}
	tb.Fatalf("every port from %d to %d is taken", low, high)
	return 0
}

// portRange is TEST_PORTS, or the thousand ports below the kernel's
// ephemeral range (Linux's default begins at 32768).
func portRange(tb testing.TB) (low, high int) {
	tb.Helper()
	if ports := os.Getenv("TEST_PORTS"); ports != "" {
		first, last, ok := strings.Cut(ports, "-")
		low, lowErr := strconv.Atoi(first)
		high, highErr := strconv.Atoi(last)
		if !ok || lowErr != nil || highErr != nil || low > high {
			tb.Fatalf("TEST_PORTS=%q is not a range of ports such as 54371-54379", ports)
		}
		return low, high
	}
	ephemeral := 32768
	if text, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if fields := strings.Fields(string(text)); len(fields) == 2 {
			if n, err := strconv.Atoi(fields[0]); err == nil && n > 2024 {
				ephemeral = n
			}
		}
	}
	return ephemeral - 1000, ephemeral - 1
}

// listening says whether anything accepts connections on port of
// 127.0.0.1.
func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
