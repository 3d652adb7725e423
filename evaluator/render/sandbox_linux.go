//go:build linux

package render

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
// then refuses it more than memory bytes of new address space and of data,
// and kills it after cpuSeconds of CPU time (RLIMIT_CPU), whatever its parent
// does.
//
// Two memory limits, because neither holds alone for a Go program:
//   - RLIMIT_AS, the address space, set to what the worker has mapped now
//     plus memory. The Go heap grows by reserving address space (PROT_NONE)
//     and then mapping it read-write over the reservation. Linux checks
//     RLIMIT_DATA on that second mapping only for the pages it does not
//     overlap (mmap_region subtracts the overlapped pages from what it
//     checks), which for the heap is none: a single 2 GB allocation under a
//     1 GiB data limit was let through, and the worker touched all of it
//     before some later small mapping failed (seen under load, one run in
//     about twenty). The reservation itself counts against RLIMIT_AS, so
//     the allocation is refused when it is made.
//   - RLIMIT_DATA, which still bounds what is mapped writable outside the Go
//     heap (C allocations, thread stacks).
//
// The race detector maps terabytes of shadow memory, so a race build keeps
// only the CPU limit and the in-process watchdog.
func limitSelf(memory, cpuSeconds int64) error {
	if memory > 0 && !raceEnabled {
		mapped, err := addressSpace()
		if err != nil {
			return err
		}
		as := &syscall.Rlimit{Cur: uint64(mapped + memory), Max: uint64(mapped + memory)}
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, as); err != nil {
			return err
		}
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

// addressSpace is the size of this process's address space in bytes (the
// first field of /proc/self/statm, in pages).
func addressSpace() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("/proc/self/statm is empty")
	}
	pages, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %v", err)
	}
	return pages * int64(os.Getpagesize()), nil
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
