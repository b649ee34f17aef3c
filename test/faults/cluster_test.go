package faults

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"mentormemory/app/apptest"
)

// privateCluster is a PostgreSQL cluster of one test's own, in a temporary
// directory, listening on 127.0.0.1 only. Unlike the shared cluster at
// DATABASE_URL, which other packages test against in parallel, it may be
// stopped and started at will.
type privateCluster struct {
	bin  string // the server's binaries: initdb, pg_ctl
	data string
	log  string
	port int
	// runAs is the unprivileged account that runs the cluster when the
	// test runs as root (PostgreSQL refuses to run as root); nil otherwise.
	runAs *syscall.Credential
}

// startPrivateCluster creates and starts a cluster that is stopped when the
// test ends, whether it passes or not.
func startPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	c := newPrivateCluster(t)
	// --no-sync: the cluster is thrown away with the test.
	c.run(t, "initdb", "-D", c.data, "--username=postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	c.configure(t, fmt.Sprintf(`
# The test's own cluster: TCP on the loopback interface only, no unix
# socket (its path could be too long, and nothing needs it), small.
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = 50
shared_buffers = 32MB
# Its data is thrown away with the test, and the test stops it cleanly.
fsync = off
# A standby can follow it (startStandby); initdb lets the loopback
# interface replicate.
wal_level = replica
max_wal_senders = 4
`, c.port))
	c.start(t)
	c.stopAtTheEnd(t)
	return c
}

// startStandby makes a streaming hot standby of primary, as an operator
// does (pg_basebackup -R, with a replication slot so that the primary keeps
// the WAL it has not received), starts it, and stops it when the test
// ends.
func startStandby(t *testing.T, primary *privateCluster) *privateCluster {
	t.Helper()
	c := newPrivateCluster(t)
	c.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", fmt.Sprint(primary.port), "-U", "postgres", "-D", c.data,
		"-R", "-X", "stream", "-C", "-S", "standby", "--checkpoint=fast", "--no-sync")
	// The primary's settings, with a port of its own; the later setting
	// wins.
	c.configure(t, fmt.Sprintf(`
port = %d
hot_standby = on
hot_standby_feedback = on
`, c.port))
	c.start(t)
	c.stopAtTheEnd(t)
	return c
}

// newPrivateCluster chooses the directory, port and account of a cluster
// of the test's own, without creating it.
func newPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	bin, err := postgresBinDir()
	if err != nil {
		missing(t, "PostgreSQL server binaries not found (%v): install postgresql, or run scripts/test.sh, which does", err)
	}
	dir := t.TempDir()
	c := &privateCluster{bin: bin, port: apptest.Port(t)}
	if os.Geteuid() == 0 {
		c.runAs, err = clusterAccount()
		if err != nil {
			missing(t, "running as root, PostgreSQL needs an unprivileged account: %v", err)
		}
		// The account must reach its directory inside the test's temporary
		// one: the directories made for the test let it enter (not list),
		// and the cluster's own directory is the account's.
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
		dir = filepath.Join(dir, "cluster")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, int(c.runAs.Uid), int(c.runAs.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	c.data = filepath.Join(dir, "data")
	c.log = filepath.Join(dir, "postgres.log")
	return c
}

// configure appends settings to the cluster's postgresql.conf.
func (c *privateCluster) configure(t *testing.T, settings string) {
	t.Helper()
	conf, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conf.WriteString(settings)
	if closeErr := conf.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// stopAtTheEnd stops the cluster when the test ends, whether it passes or
// not. Registered after t.TempDir, so it runs before the directory goes.
func (c *privateCluster) stopAtTheEnd(t *testing.T) {
	t.Cleanup(func() {
		if c.running() {
			_ = c.command("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "-t", "30", "stop").Run()
		}
	})
}

// url is the superuser's connection URL for database name.
func (c *privateCluster) url(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

// start starts the cluster and waits until it accepts connections.
func (c *privateCluster) start(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data, "-l", c.log, "-w", "-t", "30", "start")
}

// stop shuts the cluster down the way an operator restarting it would:
// "fast" ends every session at once (clients see their connections
// terminated) and returns once the server is gone.
func (c *privateCluster) stop(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data, "-m", "fast", "-w", "-t", "30", "stop")
}

func (c *privateCluster) running() bool {
	return c.command("pg_ctl", "-D", c.data, "status").Run() == nil
}

// run runs one of the server's programs and fails the test if it fails.
func (c *privateCluster) run(t *testing.T, program string, args ...string) {
	t.Helper()
	if out, err := c.command(program, args...).CombinedOutput(); err != nil {
		logged, _ := os.ReadFile(c.log)
		t.Fatalf("%s %s: %v\n%s\nserver log:\n%s", program, strings.Join(args, " "), err, out, logged)
	}
}

// command prepares one of the server's programs, as the cluster's account.
func (c *privateCluster) command(program string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, program), args...)
	// PostgreSQL's programs fail when they cannot read their working
	// directory, which the cluster's account may not (root's home).
	cmd.Dir = "/"
	if c.runAs != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.runAs}
	}
	return cmd
}

// postgresBinDir finds the directory of initdb and pg_ctl as
// scripts/lib/postgres.sh does: Debian keeps them off PATH, in
// /usr/lib/postgresql/<version>/bin, of which the newest wins; pg_config
// names it elsewhere.
func postgresBinDir() (string, error) {
	hasServer := func(dir string) bool {
		for _, program := range []string{"initdb", "pg_ctl"} {
			if info, err := os.Stat(filepath.Join(dir, program)); err != nil || info.Mode()&0o111 == 0 {
				return false
			}
		}
		return true
	}
	var candidates []string
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versions, func(i, j int) bool { return majorVersion(versions[i]) > majorVersion(versions[j]) })
	candidates = append(candidates, versions...)
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	for _, dir := range candidates {
		if hasServer(dir) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no initdb and pg_ctl in /usr/lib/postgresql/*/bin or in pg_config --bindir")
}

// majorVersion reads the version out of /usr/lib/postgresql/<version>/bin.
func majorVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// clusterAccount is the account a root-run cluster runs as, as in
// scripts/lib/postgres.sh: the Debian package's postgres user, or the one
// that script creates when there is none.
func clusterAccount() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "mentorpg"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("neither the postgres nor the mentorpg account exists (scripts/test.sh creates one)")
}
