package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"weft/internal/sandbox"
)

// runner returns a Runner with short limits, failing the test when the tools
// are missing (they are Debian packages the project installs).
func runner(t *testing.T, cfg sandbox.Config) *sandbox.Runner {
	t.Helper()
	r := sandbox.New(cfg)
	if err := r.Check(); err != nil {
		t.Fatalf("sandbox tools missing: %v", err)
	}
	return r
}

func TestRunPandasChart(t *testing.T) {
	t.Parallel()
	r := runner(t, sandbox.Config{})
	code := `
import json, os
files = sorted(os.listdir("."))
import pandas as pd
import matplotlib.pyplot as plt
df = pd.read_csv("result.csv")
ax = df.plot(x="region", y="gmv", kind="bar", legend=False)
plt.tight_layout()
plt.savefig("chart.png")
print(json.dumps({"total": float(df["gmv"].sum()), "uid": os.getuid(), "files": files}))
`
	res, err := r.Run(context.Background(), sandbox.Job{Code: code, Files: map[string][]byte{
		"result.csv": []byte("region,gmv\nShanghai,10.5\nJiangsu,20\n")}})
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, res.Stderr)
	}
	if !strings.Contains(res.Stdout, `"total": 30.5`) {
		t.Errorf("stdout = %q, want the total 30.5 computed by pandas", res.Stdout)
	}
	// The working directory held only the script and the input file.
	if !strings.Contains(res.Stdout, `"files": ["main.py", "result.csv"]`) {
		t.Errorf("stdout = %q, want the working directory to hold main.py and result.csv only", res.Stdout)
	}
	png := res.Files["chart.png"]
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("chart.png missing or not a PNG (%d bytes); files %v", len(png), keys(res.Files))
	}
	if _, ok := res.Files["result.csv"]; ok {
		t.Errorf("the unchanged input came back as an output")
	}
	if os.Geteuid() == 0 && strings.Contains(res.Stdout, `"uid": 0`) {
		t.Errorf("the code ran as root: %s", res.Stdout)
	}
}

// Each hostile program fails with a clear error, and this process (the
// worker) goes on to the next.
func TestHostileCodeFailsSafely(t *testing.T) {
	t.Parallel()
	r := runner(t, sandbox.Config{CPUTime: 2 * time.Second, Timeout: 10 * time.Second, Memory: 512 << 20})
	cases := []struct {
		name     string
		code     string
		kind     string
		contains string
	}{
		{"infinite loop", "while True:\n    pass\n", sandbox.KindCPU, "CPU-time limit"},
		{"allocate 4 GB", "b = bytearray(4 << 30)\nprint(len(b))\n", sandbox.KindMemory, "memory limit"},
		{"socket connect", "import socket\ns = socket.create_connection(('1.1.1.1', 80), timeout=3)\nprint('connected')\n",
			sandbox.KindExit, "Network is unreachable"},
		{"write outside the working directory", "open('/usr/lib/weft-escape', 'w').write('x')\n", sandbox.KindExit, "Read-only file system"},
		{"write to /tmp", "open('/tmp/weft-escape', 'w').write('x')\n", sandbox.KindExit, "No such file or directory"},
		{"write to the root", "open('/weft-escape', 'w').write('x')\n", sandbox.KindExit, "Read-only file system"},
		{"read /etc/shadow", "print(open('/etc/shadow').read())\n", sandbox.KindExit, "No such file or directory"},
		// Every process of the bomb dies on its first refused fork (RLIMIT_NPROC); what is
		// left when the wall-clock limit comes is killed with the sandbox.
		{"fork bomb", "import os\nwhile True:\n    os.fork()\n", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			res, err := r.Run(context.Background(), sandbox.Job{Code: c.code})
			var f *sandbox.Failure
			if !errors.As(err, &f) {
				t.Fatalf("err = %v (stdout %q), want a *sandbox.Failure", err, res.Stdout)
			}
			if c.kind == "" { // the fork bomb
				if !(f.Kind == sandbox.KindExit && strings.Contains(err.Error(), "Resource temporarily unavailable")) && f.Kind != sandbox.KindTimeout {
					t.Errorf("failure = %s %q, want the refused fork or the timeout", f.Kind, err)
				}
			} else if f.Kind != c.kind || !strings.Contains(err.Error(), c.contains) {
				t.Errorf("failure = %s %q, want kind %s mentioning %q", f.Kind, err, c.kind, c.contains)
			}
			if strings.Contains(res.Stdout, "connected") {
				t.Errorf("the sandbox reached the network")
			}
			t.Logf("%s: %v (%s)", c.name, err, time.Since(start).Round(time.Millisecond))
		})
	}
	if _, err := os.Stat("/usr/lib/weft-escape"); err == nil {
		t.Errorf("a file was written to the host's /usr/lib")
	}
	if _, err := os.Stat("/tmp/weft-escape"); err == nil {
		t.Errorf("a file was written to the host's /tmp")
	}
}

func TestWallClockTimeoutKillsTheSandbox(t *testing.T) {
	t.Parallel()
	r := runner(t, sandbox.Config{Timeout: 1500 * time.Millisecond})
	// A child that outlives its parent and sleeps: the whole sandbox must go.
	code := "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\ntime.sleep(30)\n"
	start := time.Now()
	_, err := r.Run(context.Background(), sandbox.Job{Code: code})
	var f *sandbox.Failure
	if !errors.As(err, &f) || f.Kind != sandbox.KindTimeout {
		t.Fatalf("err = %v, want a timeout failure", err)
	}
	if el := time.Since(start); el > 6*time.Second {
		t.Errorf("the run took %s, want it killed at the 1.5s limit", el)
	}
	// No sandboxed sleeper is left on the machine.
	out, _ := exec.Command("pgrep", "-f", "time.sleep\\(30\\)").Output()
	if len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("sandboxed processes survived the timeout: %s", out)
	}
}

func TestMissingToolsRefuseNamingThePackage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg sandbox.Config
		pkg string
	}{
		{sandbox.Config{Bwrap: "/nonexistent/bwrap"}, "bubblewrap"},
		{sandbox.Config{Python: "/usr/bin/nonexistent-python3"}, "python3"},
		{sandbox.Config{Prlimit: "/nonexistent/prlimit"}, "util-linux"},
		{sandbox.Config{Python: "/root/.pyenv/shims/python3"}, "python3"},
	}
	for _, c := range cases {
		res, err := sandbox.New(c.cfg).Run(context.Background(), sandbox.Job{Code: "print('ran')"})
		var ue *sandbox.UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, sandbox.ErrUnavailable) {
			t.Fatalf("%+v: err = %v, want an *UnavailableError", c.cfg, err)
		}
		if !strings.Contains(err.Error(), "install the Debian package "+c.pkg) {
			t.Errorf("err = %q, want it to name the package %s", err, c.pkg)
		}
		if res.Stdout != "" {
			t.Errorf("code ran without a sandbox: %q", res.Stdout)
		}
	}
}

func TestBadInputNamesAndSymlinkOutputs(t *testing.T) {
	t.Parallel()
	r := runner(t, sandbox.Config{})
	_, err := r.Run(context.Background(), sandbox.Job{Code: "pass", Files: map[string][]byte{"../x.csv": nil}})
	var f *sandbox.Failure
	if !errors.As(err, &f) || f.Kind != sandbox.KindInput {
		t.Fatalf("err = %v, want an input failure", err)
	}
	// A symbolic link left behind is not followed when outputs are read back.
	res, err := r.Run(context.Background(), sandbox.Job{Code: "import os\nos.symlink('/etc/hostname', 'leak.txt')\nopen('ok.txt','w').write('ok')\n"})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, ok := res.Files["leak.txt"]; ok {
		t.Errorf("a symbolic link was followed out of the sandbox")
	}
	if string(res.Files["ok.txt"]) != "ok" {
		t.Errorf("files = %v, want ok.txt", keys(res.Files))
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
