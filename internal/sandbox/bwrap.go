package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
)

// Paths inside the sandbox.
const workPath = "/work"

// systemFiles are the parts of /etc the interpreter and its libraries read:
// the alternatives links (libblas.so.3 for numpy), the loader cache, fonts
// and matplotlib's configuration. Missing ones are skipped.
var systemFiles = []string{"/etc/alternatives", "/etc/ld.so.cache", "/etc/fonts", "/etc/matplotlibrc", "/etc/mime.types", "/etc/localtime"}

// args is bwrap's command line for a run in dir.
func (r *Runner) args(dir string) []string {
	a := []string{
		"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--clearenv",
		"--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
	}
	// The top-level links into /usr of a merged-/usr system, or the
	// directories themselves on an older layout.
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"} {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", target, p)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, p := range systemFiles {
		a = append(a, "--ro-bind-try", p, p)
	}
	a = append(a,
		"--proc", "/proc",
		"--dev", "/dev",
		"--bind", dir, workPath,
		"--remount-ro", "/",
		"--chdir", workPath,
		"--setenv", "PATH", "/usr/bin:/bin",
		"--setenv", "HOME", workPath,
		"--setenv", "TMPDIR", workPath,
		"--setenv", "LANG", "C.UTF-8",
		"--setenv", "MPLBACKEND", "Agg",
		"--setenv", "MPLCONFIGDIR", filepath.Join(workPath, ".matplotlib"),
		"--setenv", "OPENBLAS_NUM_THREADS", "1",
		"--setenv", "OMP_NUM_THREADS", "1",
		"--setenv", "PYTHONHASHSEED", "0",
	)
	cpu := int(r.cfg.CPUTime.Seconds())
	if cpu < 1 {
		cpu = 1
	}
	a = append(a, r.cfg.Prlimit,
		"--cpu="+strconv.Itoa(cpu)+":"+strconv.Itoa(cpu+1),
		"--as="+strconv.FormatInt(r.cfg.Memory, 10),
		"--nproc="+strconv.Itoa(r.cfg.Processes),
		"--fsize="+strconv.FormatInt(r.cfg.FileSize, 10),
		"--core=0",
		"--",
		r.cfg.Python, "-I", "-B", scriptName,
	)
	return a
}
