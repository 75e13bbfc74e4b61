//go:build unix && !linux

package pgcluster

import "syscall"

// sysProcAttr runs the server as cred (nil: as this process) in its own process group.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
