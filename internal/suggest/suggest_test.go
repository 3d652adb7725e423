package suggest

import (
	"reflect"
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	rules := []string{"shared-branch-contradiction", "shared-write-branch", "shared-application", "foreign-branch-writer", "unused-waiver"}
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"shared-branch", []string{"shared-branch-contradiction", "shared-write-branch"}},
		{"shared-write-brnach", []string{"shared-write-branch"}},
		{"SHARED-APPLICATION", nil}, // the same word, case apart
		{"unused-waivers", []string{"unused-waiver"}},
		{"nothing-like-it-at-all", nil},
		{"", nil},
		{strings.Repeat("x", 1000), nil},
	} {
		if got := Nearest(tc.word, rules, 0); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Nearest(%.20q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	keys := []string{"waivers", "exclude", "kargoVersion", "failOn", "skipRules"}
	if got := DidYouMean("waiver", keys); got != `; did you mean "waivers"?` {
		t.Errorf("DidYouMean(waiver) = %q", got)
	}
	if got := DidYouMean("fail-on", keys); got != `; did you mean "failOn"?` {
		t.Errorf("DidYouMean(fail-on) = %q", got)
	}
	if got := DidYouMean("zzz", keys); got != "" {
		t.Errorf("DidYouMean(zzz) = %q", got)
	}
}
