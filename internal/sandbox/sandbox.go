// Package sandbox runs untrusted Python code (a workflow's generated
// analysis step) under bubblewrap: no network, a read-only system, a private
// working directory holding only the job's input files, CPU-time, memory,
// process and file-size limits, and a wall-clock timeout that kills the whole
// sandbox. It never runs code unsandboxed: without bwrap, prlimit or python3
// it refuses with an *UnavailableError naming the Debian package to install.
//
// The isolation (see Runner.Run): bwrap --unshare-all (new user, pid, net,
// ipc, uts and cgroup namespaces; the network namespace has only a downed
// loopback), --die-with-parent, --new-session, --clearenv, the host's /usr
// (and the /bin, /lib, /lib64, /sbin links into it) and a few files of /etc
// bound read-only, a fresh /proc and /dev, the root remounted read-only, and
// the working directory (a private directory on a tmpfs, /dev/shm when the
// host has one) as the only writable place. When the process runs as root,
// bwrap is started as an unprivileged user (Config.UID, 65534 "nobody" by
// default) so that the kernel enforces RLIMIT_NPROC (it exempts root) and the
// code holds no capability anywhere. The limits are set by prlimit(1) inside
// the sandbox, on python3 and its children only.
//
// It imports the standard library only.
package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config sets the tools and limits of a Runner. Zero fields take the
// defaults below.
type Config struct {
	// Bwrap, Prlimit and Python are the tools' paths. Python is the system's
	// interpreter (Debian's /usr/bin/python3 with python3-pandas and
	// python3-matplotlib), never a per-user shim: it must live under /usr,
	// the only part of the file system the sandbox sees.
	Bwrap   string // default /usr/bin/bwrap
	Prlimit string // default /usr/bin/prlimit
	Python  string // default /usr/bin/python3
	// CPUTime is the CPU time the code may use (RLIMIT_CPU; default 10s).
	CPUTime time.Duration
	// Memory is the address space the code may map (RLIMIT_AS; default 1 GiB).
	Memory int64
	// Processes caps the processes and threads of the sandbox user inside
	// the sandbox (RLIMIT_NPROC; default 64).
	Processes int
	// FileSize caps each file the code writes (RLIMIT_FSIZE; default 16 MiB).
	FileSize int64
	// Timeout is the wall-clock limit of one run (default 30s).
	Timeout time.Duration
	// OutputLimit caps stdout and stderr, each (default 64 KiB); the rest is
	// dropped and the result says so.
	OutputLimit int
	// MaxOutputFiles caps the files a run may hand back (default 16).
	MaxOutputFiles int
	// UID and GID are the user the sandbox runs as when this process is root
	// (default 65534, "nobody"). Ignored otherwise.
	UID, GID int
	// WorkRoot is where working directories are made (default /dev/shm when
	// it is a directory, else os.TempDir()).
	WorkRoot string
}

func (c Config) withDefaults() Config {
	orDefault(&c.Bwrap, "/usr/bin/bwrap")
	orDefault(&c.Prlimit, "/usr/bin/prlimit")
	orDefault(&c.Python, "/usr/bin/python3")
	orDefault(&c.CPUTime, 10*time.Second)
	orDefault(&c.Memory, 1<<30)
	orDefault(&c.Processes, 64)
	orDefault(&c.FileSize, 16<<20)
	orDefault(&c.Timeout, 30*time.Second)
	orDefault(&c.OutputLimit, 64<<10)
	orDefault(&c.MaxOutputFiles, 16)
	orDefault(&c.UID, 65534)
	orDefault(&c.GID, 65534)
	if c.WorkRoot == "" {
		c.WorkRoot = os.TempDir()
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			c.WorkRoot = "/dev/shm"
		}
	}
	return c
}

// orDefault sets *p to v when *p is zero or negative (an empty string).
func orDefault[T cmp.Ordered](p *T, v T) {
	var zero T
	if *p <= zero {
		*p = v
	}
}

// Job is one run: Python source and the input files put beside it in the
// working directory (plain file names, e.g. "result.csv").
type Job struct {
	Code  string
	Files map[string][]byte
}

// Result is what a run produced. Files holds the regular files the code
// left in its working directory (new, or changed inputs), such as a
// "chart.png".
type Result struct {
	Stdout          string
	Stderr          string
	StdoutTruncated bool
	StderrTruncated bool
	ExitCode        int
	Files           map[string][]byte
	Duration        time.Duration
}

// ErrUnavailable marks a run refused because a tool is missing.
var ErrUnavailable = errors.New("sandbox unavailable")

// UnavailableError names the missing tool and the Debian package that
// provides it.
type UnavailableError struct {
	Tool    string
	Path    string
	Package string
	Err     error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("python step refused: %s (%s) is not usable: %v; install the Debian package %s", e.Tool, e.Path, e.Err, e.Package)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Failure kinds.
const (
	KindTimeout  = "timeout"   // the wall-clock limit
	KindCPU      = "cpu_limit" // RLIMIT_CPU
	KindMemory   = "memory"    // an allocation refused under RLIMIT_AS
	KindKilled   = "killed"    // another signal
	KindExit     = "exit"      // a non-zero exit status
	KindInput    = "input"     // a bad job (file names)
	KindSandbox  = "sandbox"   // bwrap itself failed to set up
	KindTooLarge = "output"    // an output file over the limits
)

// Failure is a run that did not succeed: what stopped it, with the run's
// output so far.
type Failure struct {
	Kind   string
	Reason string
	Result Result
}

func (f *Failure) Error() string {
	msg := "python step failed: " + f.Reason
	if tail := lastLines(f.Result.Stderr, 1); tail != "" {
		msg += ": " + tail
	}
	return msg
}

// Runner runs jobs. It is safe for concurrent use.
type Runner struct{ cfg Config }

// New returns a Runner with cfg's tools and limits.
func New(cfg Config) *Runner { return &Runner{cfg: cfg.withDefaults()} }

// Config returns the runner's configuration with defaults filled in.
func (r *Runner) Config() Config { return r.cfg }

// Check reports whether the tools are present, as an *UnavailableError
// naming the Debian package when one is not.
func (r *Runner) Check() error {
	for _, t := range []struct{ tool, path, pkg string }{
		{"bubblewrap", r.cfg.Bwrap, "bubblewrap"},
		{"prlimit", r.cfg.Prlimit, "util-linux"},
		{"python3", r.cfg.Python, "python3 (with python3-pandas and python3-matplotlib)"},
	} {
		fi, err := os.Stat(t.path)
		switch {
		case err != nil:
			return &UnavailableError{Tool: t.tool, Path: t.path, Package: t.pkg, Err: err}
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			return &UnavailableError{Tool: t.tool, Path: t.path, Package: t.pkg, Err: errors.New("not an executable file")}
		}
	}
	if !strings.HasPrefix(filepath.Clean(r.cfg.Python), "/usr/") {
		return &UnavailableError{Tool: "python3", Path: r.cfg.Python, Package: "python3",
			Err: errors.New("the interpreter must be the system's, under /usr (the sandbox sees nothing else)")}
	}
	return nil
}

// Run runs job in a fresh sandbox and returns its output. A run that does
// not exit 0 returns a *Failure (with the output so far); missing tools an
// *UnavailableError; ctx's cancellation kills the sandbox.
func (r *Runner) Run(ctx context.Context, job Job) (Result, error) {
	if err := r.Check(); err != nil {
		return Result{}, err
	}
	for name := range job.Files {
		if !plainName(name) || name == scriptName {
			return Result{}, &Failure{Kind: KindInput, Reason: fmt.Sprintf("input file name %q is not a plain file name", name)}
		}
	}
	dir, err := r.workDir(job)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: prepare working directory: %w", err)
	}
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.cfg.Bwrap, r.args(dir)...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(r.cfg.UID), Gid: uint32(r.cfg.GID), Groups: []uint32{}}
	}
	// Killing bwrap kills the sandbox: its init has --die-with-parent, and the
	// kernel ends every process of a pid namespace whose init dies.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	stdout := &capped{limit: r.cfg.OutputLimit}
	stderr := &capped{limit: r.cfg.OutputLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	runErr := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), StdoutTruncated: stdout.dropped,
		StderrTruncated: stderr.dropped, Duration: time.Since(start)}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if f := r.classify(ctx, runErr, res); f != nil {
		return res, f
	}
	files, err := r.collect(dir, job)
	res.Files = files
	if err != nil {
		return res, &Failure{Kind: KindTooLarge, Reason: err.Error(), Result: res}
	}
	return res, nil
}

// classify turns a run's end into a *Failure, or nil for success.
func (r *Runner) classify(ctx context.Context, runErr error, res Result) *Failure {
	if runErr == nil {
		return nil
	}
	fail := func(kind, reason string) *Failure { return &Failure{Kind: kind, Reason: reason, Result: res} }
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail(KindTimeout, fmt.Sprintf("killed after the wall-clock limit of %s", r.cfg.Timeout))
	}
	if ctx.Err() != nil {
		return fail(KindKilled, "cancelled: "+ctx.Err().Error())
	}
	var ee *exec.ExitError
	if !errors.As(runErr, &ee) {
		return fail(KindSandbox, "start bubblewrap: "+runErr.Error())
	}
	code := res.ExitCode
	// bwrap reports a child killed by signal n as exit status 128+n.
	switch {
	case code == 128+int(syscall.SIGXCPU):
		return fail(KindCPU, fmt.Sprintf("killed after the CPU-time limit of %s", r.cfg.CPUTime))
	case strings.Contains(res.Stderr, "MemoryError") || strings.Contains(res.Stderr, "Cannot allocate memory"):
		return fail(KindMemory, fmt.Sprintf("memory limit of %d MiB reached", r.cfg.Memory>>20))
	case code > 128 && code < 128+65:
		return fail(KindKilled, "killed by signal "+syscall.Signal(code-128).String())
	case strings.HasPrefix(res.Stderr, "bwrap:"):
		return fail(KindSandbox, "bubblewrap could not set up the sandbox")
	}
	return fail(KindExit, "exit status "+strconv.Itoa(code))
}

const scriptName = "main.py"

func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00") && len(name) <= 100
}

// workDir makes the run's private directory, holding the script and the
// input files, owned by the sandbox user.
func (r *Runner) workDir(job Job) (string, error) {
	dir, err := os.MkdirTemp(r.cfg.WorkRoot, "weft-sandbox-")
	if err != nil {
		return "", err
	}
	files := map[string][]byte{scriptName: []byte(job.Code)}
	for k, v := range job.Files {
		files[k] = v
	}
	root := os.Geteuid() == 0
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if root {
			if err := os.Chown(p, r.cfg.UID, r.cfg.GID); err != nil {
				os.RemoveAll(dir)
				return "", err
			}
		}
	}
	if root {
		if err := os.Chown(dir, r.cfg.UID, r.cfg.GID); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, os.Chmod(dir, 0o700)
}

// collect reads back the regular files the code made or changed (symbolic
// links and directories are ignored; nothing is followed).
func (r *Runner) collect(dir string, job Job) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if name == scriptName || !e.Type().IsRegular() {
			continue
		}
		if len(out) == r.cfg.MaxOutputFiles {
			return out, fmt.Errorf("the code left more than %d files", r.cfg.MaxOutputFiles)
		}
		data, err := readNoFollow(filepath.Join(dir, name), r.cfg.FileSize)
		if err != nil {
			return out, fmt.Errorf("read output %s: %w", name, err)
		}
		if in, ok := job.Files[name]; ok && bytes.Equal(in, data) {
			continue
		}
		out[name] = data
	}
	return out, nil
}

func readNoFollow(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over the %d-byte limit", limit)
	}
	return data, nil
}

// capped keeps the first limit bytes written and drops the rest (without
// blocking the writer).
type capped struct {
	buf     bytes.Buffer
	limit   int
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.dropped = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string { return c.buf.String() }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
