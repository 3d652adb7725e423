//go:build linux

package render

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// sandbox prepares the worker's start: it is killed when flipflop ends (even
// by SIGKILL), and, with netns, it starts in a network namespace of its own,
// where the only interface is a loopback that is down, so no address at all
// can be reached, whatever the rendered code tries. As root the namespace is
// made directly; otherwise inside a user namespace that maps only the user's
// own uid and gid (no privilege is gained).
func sandbox(cmd *exec.Cmd, netns bool) {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if netns {
		if os.Geteuid() == 0 {
			attr.Cloneflags = syscall.CLONE_NEWNET
		} else {
			attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
			attr.GidMappingsEnableSetgroups = false
		}
	}
	cmd.SysProcAttr = attr
}

// namespaceRefused reports whether a start failed because the system does not
// let this user make the namespaces (user namespaces disabled, a seccomp
// profile of a container runtime, a limit of zero namespaces).
func namespaceRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.ENOSYS)
}

// limitSelf is called by the worker before it reads any input: the kernel
// then refuses it more than memory bytes of data (RLIMIT_DATA: the heap the
// Go runtime maps, counted when mapped, before a page is touched) and kills it
// after cpuSeconds of CPU time (RLIMIT_CPU), whatever its parent does. The
// race detector maps terabytes of shadow memory as data, so a race build
// keeps only the CPU limit and the in-process watchdog.
func limitSelf(memory, cpuSeconds int64) error {
	if memory > 0 && !raceEnabled {
		lim := &syscall.Rlimit{Cur: uint64(memory), Max: uint64(memory)}
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, lim); err != nil {
			return err
		}
	}
	if cpuSeconds > 0 {
		lim := &syscall.Rlimit{Cur: uint64(cpuSeconds), Max: uint64(cpuSeconds)}
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, lim); err != nil {
			return err
		}
	}
	return nil
}

// netnsID names the network namespace this process is in ("" when unknown).
func netnsID() string {
	id, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return ""
	}
	return id
}

// cpuKilled reports whether a worker was killed by the kernel for its CPU
// time (SIGKILL at RLIMIT_CPU's hard limit, or SIGXCPU).
func cpuKilled(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL)
}

// peakRSS is the largest resident set of an ended process, in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10 // kilobytes on Linux
	}
	return 0
}
