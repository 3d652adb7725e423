package cli

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// -o policyreport and -o openreports print the reports of the findings:
// a YAML stream, the cluster-scoped report first, a report per namespace the
// findings touch, results stamped with SOURCE_DATE_EPOCH when it is set.
func TestCheckPolicyReportFormats(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1798761600")
	for _, c := range []struct{ format, apiVersion, cluster, namespaced string }{
		{"policyreport", "wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport", "PolicyReport"},
		{"openreports", "openreports.io/v1alpha1", "ClusterReport", "Report"},
	} {
		stdout, stderr, code := run(t, "", "check", "-o", c.format, "../../examples/contradiction")
		if code != ExitFindings {
			t.Fatalf("%s: exit %d\n%s", c.format, code, stderr)
		}
		docs := strings.Split(stdout, "---\n")
		if docs[0] != "" || len(docs) < 3 {
			t.Fatalf("%s: not a YAML stream of reports:\n%s", c.format, stdout)
		}
		var kinds, namespaces []string
		fails := 0
		for _, d := range docs[1:] {
			var obj struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name, Namespace string
					Labels          map[string]string
				} `json:"metadata"`
				Results []struct {
					Result    string `json:"result"`
					Source    string `json:"source"`
					Timestamp struct {
						Seconds int64 `json:"seconds"`
					} `json:"timestamp"`
				} `json:"results"`
			}
			if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
				t.Fatalf("%s: %v\n%s", c.format, err, d)
			}
			if obj.APIVersion != c.apiVersion || obj.Metadata.Name != "flipflop" || obj.Metadata.Labels["app.kubernetes.io/managed-by"] != "flipflop" {
				t.Errorf("%s: %+v", c.format, obj)
			}
			kinds = append(kinds, obj.Kind)
			namespaces = append(namespaces, obj.Metadata.Namespace)
			for _, r := range obj.Results {
				if r.Result == "fail" {
					fails++
				}
				if r.Source != "flipflop" || r.Timestamp.Seconds != 1798761600 {
					t.Errorf("%s: result %+v", c.format, r)
				}
			}
		}
		if kinds[0] != c.cluster || namespaces[0] != "" {
			t.Errorf("%s: first report %s in %q", c.format, kinds[0], namespaces[0])
		}
		for i, k := range kinds[1:] {
			if k != c.namespaced || namespaces[i+1] == "" {
				t.Errorf("%s: report %d is a %s in %q", c.format, i+1, k, namespaces[i+1])
			}
		}
		if fails == 0 {
			t.Errorf("%s: the contradiction is no fail result:\n%s", c.format, stdout)
		}
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, stderr, code := run(t, "", "check", "-o", "policyreport", "../../examples/contradiction"); code != ExitIncomplete || !strings.Contains(stderr, "SOURCE_DATE_EPOCH must be a number") {
		t.Errorf("a bad SOURCE_DATE_EPOCH: exit %d\n%s", code, stderr)
	}
}

// The report flags refuse what would write a partial or foreign picture of
// the cluster, before anything is read.
func TestWriteReportsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--write-reports", "../../examples/contradiction"}, "--write-reports writes the findings of the cluster to it: it needs --cluster"},
		{[]string{"check", "--cluster", "--write-reports", "../../examples/contradiction"}, "give no PATH"},
		{[]string{"check", "--cluster", "--write-reports", "-n", "acme"}, "-n/--namespace would drop the others'"},
		{[]string{"check", "--cluster", "--report-api", "policyreport"}, "--report-api needs --write-reports"},
		{[]string{"check", "--cluster", "--write-reports", "--report-api", "policyreport,polr"}, `unknown --report-api "polr" (want policyreport or openreports)`},
	} {
		_, stderr, code := run(t, "", c.args...)
		if code != ExitIncomplete || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s", c.args, code, c.want, stderr)
		}
	}
}
