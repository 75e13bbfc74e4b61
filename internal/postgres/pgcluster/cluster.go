// Package pgcluster runs a private PostgreSQL server from the binaries installed on the
// machine (initdb and postgres on PATH, or under /usr/lib/postgresql/*/bin and similar): a
// throwaway one in a temporary directory, for tests when no server answers (internal/
// postgres/pgtest), or a lasting one in a data directory of the caller's (a development
// server for `make run`). It listens on 127.0.0.1 only, with trust authentication for the
// superuser postgres. PostgreSQL refuses to run as root, so when the process is root the
// server runs as an unprivileged user (postgres by default).
//
// A throwaway cluster is removed by Stop. Should the process die first, the server gets a
// fast-shutdown signal from the kernel (Linux), and the next Start removes the leftover
// directory. It imports pgx (to wait until the server answers) and the standard library.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Options configure Start. The zero value starts a throwaway cluster on a free port.
type Options struct {
	// Dir is the data directory. Empty: a new temporary directory, removed by Stop, with
	// durability off (fsync, full-page writes) for speed. A Dir that already holds a cluster
	// is started as it is; otherwise it is created with initdb.
	Dir string
	// Port on 127.0.0.1; 0 picks a free one.
	Port int
	// BinDir holds initdb and postgres; empty: FindBinDir.
	BinDir string
	// User runs the server when the process is root; empty: "postgres".
	User string
	// StartTimeout bounds initdb and the wait for the server to answer; 0: one minute.
	StartTimeout time.Duration
}

// Cluster is a running server.
type Cluster struct {
	dir, root, logPath string // data directory; temporary root ("" for a caller's Dir); server log
	port               int

	proc   *os.Process
	exited chan struct{} // closed when the server process has exited

	stopOnce sync.Once
	stopErr  error
}

// tempPrefix names throwaway cluster directories; ownerFile in one holds the pid that made it.
const (
	tempPrefix = "weft-pgcluster-"
	ownerFile  = "owner.pid"
)

// URL is the superuser connection URL of the postgres database.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Port is the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Dir is the data directory.
func (c *Cluster) Dir() string { return c.dir }

// Start initialises (when needed) and starts a cluster, and returns once it accepts
// connections.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	bin := opts.BinDir
	if bin == "" {
		var err error
		if bin, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	cred, err := runAs(opts.User)
	if err != nil {
		return nil, err
	}
	c := &Cluster{exited: make(chan struct{})}
	if opts.Dir == "" {
		sweepStale()
		if c.root, err = os.MkdirTemp("", tempPrefix); err != nil {
			return nil, fmt.Errorf("start postgres: %w", err)
		}
		if err := os.WriteFile(filepath.Join(c.root, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			c.removeRoot()
			return nil, fmt.Errorf("start postgres: %w", err)
		}
		if err := chown(c.root, cred); err != nil {
			c.removeRoot()
			return nil, err
		}
		c.dir = filepath.Join(c.root, "data")
		c.logPath = filepath.Join(c.root, "postgres.log")
	} else {
		if c.dir, err = filepath.Abs(opts.Dir); err != nil {
			return nil, fmt.Errorf("start postgres: %w", err)
		}
		c.logPath = filepath.Join(filepath.Dir(c.dir), filepath.Base(c.dir)+".log")
	}
	if err := c.initdb(ctx, bin, cred); err != nil {
		c.removeRoot()
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		port := opts.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				c.removeRoot()
				return nil, err
			}
		}
		err = c.start(ctx, bin, cred, port)
		if err == nil {
			return c, nil
		}
		// A free port taken in between: try another one.
		if opts.Port != 0 || attempt == 3 || !strings.Contains(err.Error(), "could not bind") {
			c.removeRoot()
			return nil, err
		}
	}
}

// FindBinDir returns the directory holding initdb and postgres: the one of initdb on PATH
// (symlinks resolved), else the newest of /usr/lib/postgresql/*/bin (Debian, Ubuntu),
// /usr/pgsql-*/bin (RHEL), /usr/local/pgsql/bin and the Homebrew prefixes.
func FindBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if d := filepath.Dir(p); isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	var dirs []string
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin", "/usr/local/pgsql/bin",
		"/opt/homebrew/opt/postgresql*/bin", "/usr/local/opt/postgresql*/bin"} {
		m, _ := filepath.Glob(pattern)
		sort.Slice(m, func(i, j int) bool { return versionOf(m[i]) > versionOf(m[j]) })
		dirs = append(dirs, m...)
	}
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("find postgres: no initdb and postgres binaries on PATH or under /usr/lib/postgresql/*/bin (install the PostgreSQL server package)")
}

// versionOf is the major version in a path such as /usr/lib/postgresql/16/bin, or 0.
func versionOf(p string) int {
	for _, part := range strings.Split(p, "/") {
		part = strings.TrimPrefix(strings.TrimPrefix(part, "pgsql-"), "postgresql@")
		if v, err := strconv.Atoi(part); err == nil {
			return v
		}
	}
	return 0
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// runAs picks the user to run as: nobody in particular unless the process is root.
func runAs(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if name == "" {
		name = "postgres"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("start postgres: running as root, and PostgreSQL must run as another user, but there is no user %q (create it, e.g. useradd --system %s): %w", name, name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("start postgres: user %s: %w", name, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("start postgres: hand %s to the server's user: %w", path, err)
	}
	return nil
}

// reachable checks that the server's user (when not this process's) can walk down to dir.
func reachable(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil {
			mode, sys := st.Mode().Perm(), st.Sys().(*syscall.Stat_t)
			ok := mode&0o001 != 0 || (sys.Uid == cred.Uid && mode&0o100 != 0) || (sys.Gid == cred.Gid && mode&0o010 != 0)
			if !ok {
				return fmt.Errorf("start postgres: the server's user (uid %d) cannot reach %s: %s is not searchable by it", cred.Uid, dir, d)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// initdb creates the cluster unless the data directory already holds one.
func (c *Cluster) initdb(ctx context.Context, bin string, cred *syscall.Credential) error {
	if isFile(filepath.Join(c.dir, "PG_VERSION")) {
		return nil
	}
	if c.root == "" { // the caller's directory: make it (and hand it over) if it is not there
		if err := reachable(filepath.Dir(c.dir), cred); err != nil {
			return err
		}
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return fmt.Errorf("start postgres: %w", err)
		}
		if err := chown(c.dir, cred); err != nil {
			return err
		}
	}
	args := []string{"-D", c.dir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C"}
	if c.root != "" {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), args...)
	cmd.Dir = filepath.Dir(c.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("start postgres: initdb: %w\n%s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// start runs the server on port and waits until it answers.
func (c *Cluster) start(ctx context.Context, bin string, cred *syscall.Credential, port int) error {
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	defer logf.Close() // the server holds its own descriptor
	args := []string{"-D", c.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="}
	if c.root != "" {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Dir = filepath.Dir(c.dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(cred)

	exited := make(chan struct{})
	startErr := make(chan error, 1)
	go func() {
		// The kernel signals the server when the thread that started it exits (Pdeathsig):
		// keep this goroutine on its thread for the server's whole life.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		_ = cmd.Wait()
		close(exited)
	}()
	if err := <-startErr; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	c.proc, c.exited, c.port = cmd.Process, exited, port

	url := c.URL()
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgconn.Connect(attempt, url)
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("start postgres: the server exited: %s", c.logTail())
		case <-ctx.Done():
			_ = c.halt()
			return fmt.Errorf("start postgres: no answer on port %d (%v): %s", port, err, c.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail is the end of the server log, for error messages.
func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(c.logPath)
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Stop shuts the server down (fast shutdown: clients are disconnected) and, for a throwaway
// cluster, removes its directory. Calling it again does nothing.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.stopErr = c.halt()
		c.removeRoot()
	})
	return c.stopErr
}

// halt stops the server: SIGINT (fast shutdown), then SIGQUIT (immediate), then SIGKILL.
func (c *Cluster) halt() error {
	if c.proc == nil {
		return nil
	}
	for _, step := range []struct {
		sig  os.Signal
		wait time.Duration
	}{{syscall.SIGINT, 30 * time.Second}, {syscall.SIGQUIT, 5 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		if err := c.proc.Signal(step.sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("stop postgres: %w", err)
		}
		select {
		case <-c.exited:
			return nil
		case <-time.After(step.wait):
		}
	}
	return fmt.Errorf("stop postgres: pid %d did not exit", c.proc.Pid)
}

func (c *Cluster) removeRoot() {
	if c.root != "" {
		_ = os.RemoveAll(c.root)
	}
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("start postgres: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// sweepStale removes throwaway clusters left behind by processes that died without Stop:
// those whose owner and server processes are both gone.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		owner, err := readPid(filepath.Join(d, ownerFile))
		if err != nil || alive(owner) {
			continue
		}
		if server, err := readPid(filepath.Join(d, "data", "postmaster.pid")); err == nil && alive(server) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// readPid reads the pid on a file's first line.
func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}
