package evaluator_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// The Kargo version the policies follow, as the evaluator reports it: the
// newest modelled when none is named, the one named (normalised), the newest
// for a newer one (Named keeps what was asked), and an error for what is no
// version.
func TestKargoVersion(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		setting string
		want    evaluator.KargoVersion
	}{
		{"", evaluator.KargoVersion{Version: "v1.11.2", Assumed: true}},
		{"1.9", evaluator.KargoVersion{Version: "v1.9.0"}},
		{"v1.10.3-rc.1", evaluator.KargoVersion{Version: "v1.10.3"}},
		{"v3.1.0", evaluator.KargoVersion{Version: "v1.11.2", Named: "v3.1.0"}},
	} {
		e, err := evaluator.New(ctx, evaluator.Settings{KargoVersion: tc.setting})
		if err != nil {
			t.Fatalf("%q: %v", tc.setting, err)
		}
		if got := e.Kargo(); got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.setting, got, tc.want)
		}
		r, err := e.Evaluate(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kargo == nil || *r.Kargo != tc.want {
			t.Errorf("%q: the report says %+v", tc.setting, r.Kargo)
		}
	}
	for _, bad := range []string{"latest", "v1", "1.9.x", "main"} {
		_, err := evaluator.New(ctx, evaluator.Settings{KargoVersion: bad})
		var se *evaluator.SettingError
		if !errors.As(err, &se) || se.Value != bad {
			t.Errorf("%q: %v, want a SettingError", bad, err)
		}
	}
}
