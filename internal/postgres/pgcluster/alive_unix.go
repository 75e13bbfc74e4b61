//go:build unix

package pgcluster

import (
	"errors"
	"syscall"
)

// alive reports whether a process exists (signal 0 probes without sending anything).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
