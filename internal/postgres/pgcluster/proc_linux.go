package pgcluster

import "syscall"

// sysProcAttr runs the server as cred (nil: as this process), in its own process group (a
// terminal's Ctrl-C reaches only this process, which stops the server in order), and has
// the kernel ask it for a fast shutdown if this process dies first.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
}
