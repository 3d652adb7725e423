package clidoc

import (
	"strings"
	"testing"
)

const root = "../.."

// TestCommittedReferenceIsCurrent fails when docs/reference/ or docs/man/
// differ from what the command tree produces.
func TestCommittedReferenceIsCurrent(t *testing.T) {
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("the command reference is stale; run '%s' (go run ./hack/gendocs) and commit:\n  %s",
			RegenerateCommand, strings.Join(problems, "\n  "))
	}
}

// Every command has a page and a man page, the pages are the same from one run
// to the next (no date, no map order), and the flags are grouped as in the help.
func TestGenerate(t *testing.T) {
	a, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"flipflop", "flipflop_check", "flipflop_explain", "flipflop_fix", "flipflop_completion_bash", "flipflop_version"} {
		md := string(a[ReferenceDir+"/"+name+".md"])
		man := string(a[ManDir+"/"+strings.ReplaceAll(name, "_", "-")+".1"])
		if md == "" || man == "" {
			t.Errorf("%s: no page (%d bytes) or man page (%d bytes)", name, len(md), len(man))
		}
		if strings.Contains(md, "Auto generated") || strings.Contains(man, "Auto generated") {
			t.Errorf("%s carries cobra's dated tag", name)
		}
	}
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for name, content := range a {
		if string(b[name]) != string(content) {
			t.Errorf("%s differs from one run to the next", name)
		}
	}
	check := string(a[ReferenceDir+"/flipflop_check.md"])
	last := -1
	for _, h := range []string{"### Input flags", "### Rule flags", "### Estate flags", "### Rendering flags", "### Cluster flags", "### Output flags", "### Other flags"} {
		i := strings.Index(check, h)
		if i <= last {
			t.Errorf("flipflop_check.md: %q missing or out of order", h)
		}
		last = i
	}
	if strings.Contains(check, "### Options") {
		t.Error("flipflop_check.md keeps cobra/doc's ungrouped options")
	}
}

func TestMarkdownLong(t *testing.T) {
	in := "Exit codes:\n  0  clean\n  1  findings\n\n  2  errors\nThen prose.\n  a command\n\nEnd."
	want := "Exit codes:\n\n```\n  0  clean\n  1  findings\n\n  2  errors\n```\n\nThen prose.\n\n```\n  a command\n```\n\nEnd."
	if got := markdownLong(in); got != want {
		t.Errorf("markdownLong:\n%s\nwant:\n%s", got, want)
	}
}
