package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name                  string
		stampV, stampC, stamp string
		bi                    *debug.BuildInfo
		want                  Info
		short                 string
	}{
		{
			name:   "release build: the stamps win",
			stampV: "v1.4.0", stampC: "0123456789abcdef0123456789abcdef01234567", stamp: "2026-03-01T10:00:00Z",
			bi:    &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want:  Info{Version: "v1.4.0", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-03-01T10:00:00Z", Go: "go1.26.8"},
			short: "v1.4.0 (commit 0123456789ab, 2026-03-01T10:00:00Z)",
		},
		{
			name:  "go install module@v1.4.0: the module version, no VCS information",
			bi:    &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			want:  Info{Version: "v1.4.0", Go: "go1.26.8"},
			short: "v1.4.0",
		},
		{
			name:  "go install module@main: a pseudo-version names the commit",
			bi:    &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.1-0.20260301100000-0123456789ab"}},
			want:  Info{Version: "v1.4.1-0.20260301100000-0123456789ab", Commit: "0123456789ab", Go: "go1.26.8"},
			short: "v1.4.1-0.20260301100000-0123456789ab (commit 0123456789ab)",
		},
		{
			name: "go build in a modified checkout",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20260301100000-0123456789ab+dirty"},
				Settings: vcs("vcs", "git", "vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2026-03-01T10:00:00Z", "vcs.modified", "true")},
			want:  Info{Version: "v0.0.0-20260301100000-0123456789ab+dirty", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-03-01T10:00:00Z", Modified: true, Go: "go1.26.8"},
			short: "v0.0.0-20260301100000-0123456789ab+dirty (commit 0123456789ab, 2026-03-01T10:00:00Z)",
		},
		{
			name: "go build -buildvcs=false",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("-buildvcs", "false")},
			want: Info{Version: Dev, Go: "go1.26.8"}, short: Dev,
		},
		{
			name: "a tag that looks like nothing Go made",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v2.0.0-rc.1"}},
			want: Info{Version: "v2.0.0-rc.1", Go: "go1.26.8"}, short: "v2.0.0-rc.1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolve(tc.stampV, tc.stampC, tc.stamp, tc.bi)
			if got != tc.want {
				t.Errorf("resolve = %+v, want %+v", got, tc.want)
			}
			if s := got.Short(); s != tc.short {
				t.Errorf("Short = %q, want %q", s, tc.short)
			}
		})
	}
	if got := resolve("", "", "", nil); got.Version != Dev {
		t.Errorf("no build information: %+v", got)
	}
}
