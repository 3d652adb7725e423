package evaluator

// Waiver is one entry of a waivers file: findings of Rule ("*" for any) that
// involve a resource matching one of Resources ("Kind/namespace/name" globs,
// e.g. "Stage/acme/*") are waived for Reason until Expires (YYYY-MM-DD, optional).
// A waiver without a reason waives nothing and is reported (invalid-waiver);
// an expired one waives nothing and is reported (waiver-expired).
type Waiver struct {
	Rule      string   `yaml:"rule" json:"rule"`
	Resources []string `yaml:"resources" json:"resources"`
	Reason    string   `yaml:"reason" json:"reason"`
	Expires   string   `yaml:"expires" json:"expires,omitempty"`
	// File and Line say where the waiver was written.
	File string `yaml:"-" json:"-"`
	Line int    `yaml:"-" json:"-"`
}

func (w Waiver) data() map[string]any {
	resources := make([]any, 0, len(w.Resources))
	for _, r := range w.Resources {
		resources = append(resources, r)
	}
	return map[string]any{
		"rule": w.Rule, "resources": resources, "reason": w.Reason, "expires": w.Expires,
		"origin": map[string]any{"apiVersion": "flipflop.dev/v1", "kind": "Waiver", "namespace": "", "name": w.Rule, "file": w.File, "line": w.Line},
	}
}
