// Package version says which flipflop a binary is: the release stamped at link
// time by the release build, else what the Go toolchain recorded in the binary
// (the module version of `go install ...@v1.2.3`, the VCS revision and time of a
// build in a Git checkout).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by release builds (.goreleaser.yaml) with
//
//	-ldflags "-X github.com/flipflop-dev/flipflop/internal/version.version=v1.2.3
//	          -X github.com/flipflop-dev/flipflop/internal/version.commit=<sha>
//	          -X github.com/flipflop-dev/flipflop/internal/version.date=<RFC 3339>"
//
// Empty means: read the build information instead.
var (
	version string
	commit  string
	date    string
)

// Dev is the version of a binary that carries no version: built from a
// checkout without VCS stamping (-buildvcs=false) and without -ldflags.
const Dev = "dev"

// Info is what a binary knows about its own build.
type Info struct {
	// Version is a release tag (v1.2.3), a Go pseudo-version
	// (v0.0.0-20260102150405-0123456789ab, "+dirty" when built from a modified
	// tree), or Dev.
	Version string `json:"version"`
	// Commit is the full revision the binary was built from, when known.
	Commit string `json:"commit,omitempty"`
	// Date is the commit's time (or the release's build time), when known.
	Date string `json:"date,omitempty"`
	// Modified: built from a work tree with uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Go is the Go release the binary was built with.
	Go string `json:"go"`
}

// Get returns the build information of the running binary.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolve(version, commit, date, bi)
}

// String is the version alone, for user agents and tool descriptions.
func String() string { return Get().Version }

// resolve combines the link-time stamps with the build information: a stamp
// wins over what the toolchain recorded.
func resolve(stampVersion, stampCommit, stampDate string, bi *debug.BuildInfo) Info {
	info := Info{Version: stampVersion, Commit: stampCommit, Date: stampDate, Go: runtime.Version()}
	if bi == nil {
		if info.Version == "" {
			info.Version = Dev
		}
		return info
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if info.Version == "" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		} else {
			info.Version = Dev
		}
	}
	if info.Commit == "" {
		info.Commit = settings["vcs.revision"]
	}
	if info.Commit == "" {
		info.Commit = pseudoRevision(info.Version)
	}
	if info.Date == "" {
		info.Date = settings["vcs.time"]
	}
	info.Modified = settings["vcs.modified"] == "true" || strings.HasSuffix(info.Version, "+dirty")
	return info
}

// pseudoRevision returns the commit prefix a Go pseudo-version ends with
// (v0.0.0-20260102150405-0123456789ab → 0123456789ab), or "".
func pseudoRevision(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 {
		return ""
	}
	rev := v[i+1:]
	prev := v[:i]
	j := strings.LastIndexAny(prev, "-.")
	if len(rev) != 12 || j < 0 || len(prev)-j-1 != 14 || !allDigits(prev[j+1:]) || !isHex(rev) {
		return ""
	}
	return rev
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// Short is one line: "v1.2.3 (commit 0123456789ab, 2026-01-02T15:04:05Z, modified)".
func (i Info) Short() string {
	var extra []string
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		extra = append(extra, "commit "+c)
	}
	if i.Date != "" {
		extra = append(extra, i.Date)
	}
	if i.Modified && !strings.HasSuffix(i.Version, "+dirty") {
		extra = append(extra, "modified")
	}
	if len(extra) == 0 {
		return i.Version
	}
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(extra, ", "))
}
