package tests

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// stagesOf returns the Stages (namespace/name) of every finding of a rule, one
// sorted list a finding.
func stagesOf(r *evaluator.Report, rule string) [][]string {
	var out [][]string
	for _, f := range findingsOf(r, rule) {
		k := stageKeys(f)
		slices.Sort(k)
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, ","), strings.Join(b, ",")) })
	return out
}

// wantStages checks that a rule gives one finding a list of Stages, each
// sorted (as stagesOf).
func wantStages(t *testing.T, r *evaluator.Report, rule string, want ...[]string) {
	t.Helper()
	if got := stagesOf(r, rule); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%s between %v, want %v", rule, got, want)
	}
}

// stepStages lists the Stages of the invalid-step-config findings about a
// step that uses uses and whose message says text, sorted.
func stepStages(r *evaluator.Report, uses, text string) [][]string {
	var out [][]string
	for _, f := range findingsOf(r, "invalid-step-config") {
		if f.Details["uses"] == uses && strings.Contains(f.Message, text) {
			out = append(out, stageKeys(f))
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// wantMessage checks that every finding of a rule says each of the texts.
func wantMessage(t *testing.T, r *evaluator.Report, rule string, texts ...string) {
	t.Helper()
	for _, f := range findingsOf(r, rule) {
		for _, x := range texts {
			if !strings.Contains(f.Message, x) {
				t.Errorf("%s does not say %q: %s", rule, x, f.Message)
			}
		}
	}
}

// each lists the Stages of a namespace, one a list.
func each(ns string, names ...string) [][]string {
	var out [][]string
	for _, n := range names {
		out = append(out, []string{ns + "/" + n})
	}
	return out
}

// all lists the Stages of a namespace as one sorted list.
func all(ns string, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, ns+"/"+n)
	}
	slices.Sort(out)
	return out
}

func times(rule string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = rule
	}
	return out
}

// moreRealWorldRows are the estates the corpus README gained with issue 40:
// one row for each row of the README, and for each older commit it names.
func moreRealWorldRows() []row {
	craftista := all("craftista", "catalogue-dev-stage", "catalogue-prod-stage", "catalogue-staging-stage",
		"frontend-dev-stage", "frontend-prod-stage", "frontend-staging-stage",
		"recommendation-dev-stage", "recommendation-prod-stage", "recommendation-staging-stage",
		"voting-dev-stage", "voting-prod-stage", "voting-staging-stage")
	aksStore := func(projects ...string) []string {
		var out []string
		for _, p := range projects {
			out = append(out, all(p, "dev", "test", "prod")...)
		}
		slices.Sort(out)
		return out
	}
	chriske := func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
		wantStages(t, r, "shared-write-branch", aksStore("aks-store", "aks-store-health-gate", "aks-store-manual-freight", "aks-store-release-manifest"))
	}
	mika := func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
		wantStages(t, r, "shared-write-branch", all("kargo-demo", "acc", "hotfix-acc"), all("kargo-demo", "hotfix-prod", "prod"))
	}
	fuskovic := func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
		// One vars entry of each of two Stages repeats name: and value: (it
		// lost its "- "): one mistake, one finding a Stage, naming both keys.
		wantStages(t, r, "duplicate-key", each("guestbook", "prod-useast", "uat")...)
		wantMessage(t, r, "duplicate-key", `repeats the keys "name", "value" in one mapping`)
	}
	davittorch := func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
		five := all("kargo-advanced", "dev", "staging", "prod-east", "prod-west", "prod-central")
		wantStages(t, r, "shared-branch-contradiction", five)
		wantStages(t, r, "shared-write-branch", five)
	}
	// The values files env/*/kustomization.yaml list as resources: kustomize
	// cannot build them (no Application does either).
	valuesAsResources := func(envs ...string) []inputError {
		var out []inputError
		for _, e := range envs {
			out = append(out, inputError{"env/" + e + "/kustomization.yaml", "catalogue/catalogue-values.yaml': missing Resource metadata"})
		}
		return out
	}
	return []row{
		{name: "laprus HEAD", paths: topLevel("laprus__devops-config"), warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "shared-write-branch", all("devops-kargo", "dev", "staging", "prod"))
			}},
		{name: "laprus at-3af8f7a", paths: []string{"laprus__devops-config/at-3af8f7a"},
			errors: []string{"missing-authorized-stage", "unmatched-update-source"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantMessage(t, r, "missing-authorized-stage", `"kargo.akuity.io/allowed-stage-namespaces"`)
				wantMessage(t, r, "unmatched-update-source", "github.com/laprus/devops-config", "github.com/laprus/devops.git")
			}},
		{name: "laprus at-e1184a4", paths: []string{"laprus__devops-config/at-e1184a4"},
			errors: []string{"unmatched-update-source"}},
		// git-clone's checkout is a map where Kargo's schema wants a list: every
		// promotion fails at step 1. The README lists it as invalid-object; the
		// step schemas are invalid-step-config's since issue 43, at any depth.
		// The later steps (kustomize-set-image images[] without image,
		// git-commit and git-push without path) fail too once it is fixed, so
		// their invalid-step-config warnings are true. The Stage CRD requires
		// requestedFreight[].sources, which these Stages leave out: the API
		// server rejects them (invalid-object, true; the README predates the
		// CRD validation).
		{name: "rajaramiotfal", paths: []string{"rajaramiotfal__multi-cluster-gitops-structure"},
			warnings: []string{"invalid-step-config"}, extra: []string{"invalid-object"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "invalid-object", each("demoapp", "dev", "prod", "qa")...)
				wantMessage(t, r, "invalid-object", "spec.requestedFreight[0].sources is missing")
				if got, want := stepStages(r, "git-clone", "git-clone schema: checkout is an object, want array"), each("demoapp", "dev", "prod", "qa"); !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("git-clone checkout reported on %v, want %v", got, want)
				}
			}},
		{name: "AyanWarsame", paths: []string{"AyanWarsame__ShopCloud"}, warnings: []string{"shared-write-branch"},
			// envs/*/kustomization.yaml point at ../base, which does not exist:
			// Argo CD cannot build those Applications either.
			inputErrors: []inputError{
				{"envs/dev/kustomization.yaml", "envs/base: file does not exist"},
				{"envs/staging/kustomization.yaml", "envs/base: file does not exist"},
				{"envs/prod/kustomization.yaml", "envs/base: file does not exist"},
			},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				// legacy gitRepoUpdates writeBranch: main, three Stages.
				wantStages(t, r, "shared-write-branch", all("kargo", "dev", "staging", "prod"))
			}},
		{name: "juwondre", paths: []string{"juwondre__swiftwad-gitops"}, warnings: []string{"shared-write-branch"},
			// The chart requires app.name, which only the per-environment values
			// files give: an input error with the chart's own values is fair.
			inputErrors: []inputError{{"charts/app-template/templates/serviceaccount.yaml", "app.name is required"}},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "shared-write-branch", all("sample-api-delivery", "dev", "staging"))
			}},
		{name: "vchandela", paths: []string{"vchandela__gitops-for-dummies"}, warnings: []string{"shared-write-branch"},
			inputErrors: valuesAsResources("dev", "staging", "prod"),
			check: func(t *testing.T, r *evaluator.Report, objs []evaluator.Object) {
				wantStages(t, r, "shared-write-branch", craftista)
				if n := countKind(objs, "PromotionTask"); n != 4 {
					t.Errorf("%d PromotionTasks, want 4", n)
				}
			}},
		{name: "kdwils", paths: []string{"kdwils__homelab"}, warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, objs []evaluator.Object) {
				sww := stagesOf(r, "shared-write-branch")
				if len(sww) != 1 || len(sww[0]) != 35 {
					t.Errorf("shared-write-branch between %v, want 35 Stages", sww)
				}
				if countKind(objs, "ClusterPromotionTask") == 0 {
					t.Error("no ClusterPromotionTask read")
				}
			}},
		{name: "scott-hpe", paths: []string{"scott-hpe__kargo-ccs"}},
		{name: "scott-hpe --repo-root", paths: []string{"scott-hpe__kargo-ccs"}, repoRoots: []string{"scott-hpe__kargo-ccs"}},
		{name: "pbrousseau", paths: []string{"pbrousseau-sdx__kargo-a-go-go"}},
		{name: "pbrousseau --repo-root", paths: []string{"pbrousseau-sdx__kargo-a-go-go"}, repoRoots: []string{"pbrousseau-sdx__kargo-a-go-go"},
			check: func(t *testing.T, _ *evaluator.Report, objs []evaluator.Object) {
				// The git-directory generator is expanded over env/*: development.
				for _, o := range objs {
					if o.Kind == "ApplicationSet" && !strings.Contains(o.Value.String(), `"path.basename": "development"`) {
						t.Errorf("ApplicationSet %s not expanded: %s", o.Name, o.Value)
					}
				}
			}},
		{name: "jessesuen kargo-blue-green", paths: []string{"jessesuen__kargo-blue-green"}},
		{name: "jessesuen kargo-blue-green --repo-root", paths: []string{"jessesuen__kargo-blue-green"}, repoRoots: []string{"jessesuen__kargo-blue-green"}},
		{name: "arober39", paths: []string{"arober39__common-case-kargo-example"}},
		{name: "crmagz", paths: []string{"crmagz__argo-kargo-demo"}},
		{name: "ccironny", paths: []string{"ccironny__akuity-demo"}},
		{name: "chriskeAlerant v1.10.0", paths: topLevel("chriskeAlerant__kargo-demo-gitops"), kargo: "v1.10.0",
			warnings: []string{"shared-write-branch"}, check: chriske},
		{name: "chriskeAlerant", paths: topLevel("chriskeAlerant__kargo-demo-gitops"),
			warnings: []string{"shared-write-branch"}, check: chriske},
		{name: "chriskeAlerant at-d585afc", paths: []string{"chriskeAlerant__kargo-demo-gitops/at-d585afc"}, kargo: "v1.10.0",
			errors: []string{"shared-branch-contradiction"}, warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "shared-branch-contradiction", all("aks-store", "dev", "test", "prod"))
			}},
		{name: "wanghong230", paths: topLevel("wanghong230__guestbook-gitops"), kargo: "v1.10.0"},
		{name: "wanghong230 at-40f1722", paths: []string{"wanghong230__guestbook-gitops/at-40f1722"}, kargo: "v1.10.0",
			errors: []string{"shared-branch-contradiction"}, warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "shared-branch-contradiction", all("guestbook", "dev", "staging", "prod"))
			}},
		{name: "MikaKolk12", paths: topLevel("MikaKolk12__kargo-demo"), kargo: "v1.10.0",
			errors: times("foreign-branch-writer", 2), warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, objs []evaluator.Object) {
				mika(t, r, objs)
				wantStages(t, r, "foreign-branch-writer", all("kargo-demo", "acc", "hotfix-acc"), all("kargo-demo", "hotfix-prod", "prod"))
			}},
		// The contradictions of acc and prod with their hotfix Stages are
		// latent behind the glob: not expected while the annotation fails.
		{name: "MikaKolk12 at-714a55d", paths: []string{"MikaKolk12__kargo-demo/at-714a55d"}, kargo: "v1.10.0",
			errors: times("missing-authorized-stage", 4), warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, objs []evaluator.Object) {
				mika(t, r, objs)
				wantStages(t, r, "missing-authorized-stage", each("kargo-demo", "acc", "hotfix-acc", "hotfix-prod", "prod")...)
				wantMessage(t, r, "missing-authorized-stage", `"kargo-demo:*"`, "glob")
			}},
		{name: "fuskovic v1.7.0", paths: topLevel("fuskovic__kargo-testing"), kargo: "v1.7.0",
			warnings: []string{"duplicate-key"}, check: fuskovic},
		{name: "fuskovic", paths: topLevel("fuskovic__kargo-testing"),
			warnings: []string{"duplicate-key"}, check: fuskovic},
		// v1.6 has git-wait-for-pr's prNumber: right until v1.7.
		{name: "fuskovic at-aecf12a v1.6.0", paths: []string{"fuskovic__kargo-testing/at-aecf12a"}, kargo: "v1.6.0",
			warnings: []string{"duplicate-key"}, absent: []string{"invalid-step-config"}, check: fuskovic},
		// The Applications carry the label kargo.akuity.io/project, no
		// annotation; once authorized, preprod and production pin their own
		// commits on master: latent, not expected while the annotation fails.
		{name: "gjhenrique-prezi v1.3.2", paths: []string{"gjhenrique-prezi__kargo-test"}, kargo: "v1.3.2",
			errors: times("missing-authorized-stage", 2), warnings: []string{"shared-write-branch"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "missing-authorized-stage", each("testapp", "preprod", "production")...)
				wantMessage(t, r, "missing-authorized-stage", `label "kargo.akuity.io/project"`)
			}},
		{name: "jake-painter v1.10.0", paths: []string{"jake-painter__akuity-platform-onboarding"}, kargo: "v1.10.0"},
		{name: "davittorch v0.8.0", paths: []string{"davittorch__bluebird-kargo"}, kargo: "v0.8.0",
			errors: []string{"shared-branch-contradiction"}, warnings: []string{"shared-write-branch"}, check: davittorch},
		{name: "davittorch v0.8.0 --repo-root", paths: []string{"davittorch__bluebird-kargo"}, kargo: "v0.8.0",
			repoRoots: []string{"davittorch__bluebird-kargo"},
			errors:    []string{"shared-branch-contradiction"}, warnings: []string{"shared-write-branch"}, check: davittorch},
		// All five Stages fail every promotion, errors since the version is
		// named: argocd-update's desiredCommitFromStep (gone in v1.3) and
		// git-commit's messageFromSteps (gone in v1.5), and kustomize-set-image
		// images[] with neither tag nor digest (the images[] oneOf, v1.4 on).
		{name: "nitin4613 v1.9.0", paths: []string{"nitin4613__se-demo-akuity"}, kargo: "v1.9.0",
			errors:   append(times("unsupported-field", 5), times("invalid-step-config", 10)...),
			warnings: []string{"shared-write-branch"}, absent: []string{"shared-branch-contradiction"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				nitin := each("guestbook", "dev", "prod-eu", "prod-us-east", "prod-us-west", "staging")
				wantStages(t, r, "unsupported-field", nitin...)
				wantMessage(t, r, "unsupported-field", "desiredCommitFromStep", "it was removed in v1.3.0")
				if got := stepStages(r, "git-commit", "messageFromSteps is not a key it allows"); !slices.EqualFunc(got, nitin, slices.Equal) {
					t.Errorf("git-commit messageFromSteps reported on %v, want %v", got, nitin)
				}
				if got := stepStages(r, "kustomize-set-image", "images[0]"); !slices.EqualFunc(got, nitin, slices.Equal) {
					t.Errorf("kustomize-set-image images[] without tag or digest reported on %v, want %v", got, nitin)
				}
			}},
		// Without a version the same failures rest on the assumed newest: warnings that say so.
		{name: "nitin4613", paths: []string{"nitin4613__se-demo-akuity"},
			warnings: []string{"shared-write-branch", "invalid-step-config", "unsupported-field"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantMessage(t, r, "unsupported-field", "flipflop assumed the newest Kargo it models, so this is a warning")
				wantMessage(t, r, "invalid-step-config", "flipflop assumed the newest Kargo it models, so this is a warning")
			}},
		// On v1.2 desiredCommitFromStep pins, and the five Stages contradict
		// one another on main: right there.
		{name: "nitin4613 v1.2.0", paths: []string{"nitin4613__se-demo-akuity"}, kargo: "v1.2.0",
			errors: []string{"shared-branch-contradiction"}, warnings: []string{"shared-write-branch"}},
		// dev fails at git-commit (messageFromSteps, gone in v1.5), staging
		// and prod are written with promotionMechanisms, which v1.x drops: no
		// Stage can promote, and none pushes. Errors, since the version is named.
		// The Stage CRD requires requestedFreight (staging, prod: read as v1.6
		// reads them, they have none) and its entries' sources (dev): the
		// API server rejects all three (invalid-object, true; the README
		// predates the CRD validation).
		{name: "alkon v1.6.0", paths: []string{"alkon__final-project-devops-repo"}, kargo: "v1.6.0",
			errors: append(times("unsupported-field", 2), "invalid-step-config"), absent: []string{"shared-write-branch"},
			extra: []string{"invalid-object"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "unsupported-field", each("flask-app", "prod", "staging")...)
				wantStages(t, r, "invalid-step-config", []string{"flask-app-ns/dev"})
			}},
		// Without a version the two promotionMechanisms Stages are read as
		// Kargo v0.8 reads them, and push one branch: the finding says so.
		{name: "alkon", paths: []string{"alkon__final-project-devops-repo"},
			warnings: []string{"invalid-step-config", "shared-write-branch"}, extra: []string{"invalid-object"},
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "shared-write-branch", all("flask-app", "prod", "staging"))
				wantMessage(t, r, "shared-write-branch", "are written with spec.promotionMechanisms, so flipflop read them as Kargo v0.8 does, not as Kargo v1.")
			}},
		// The same 12 Stages as vchandela's; its Chart.yaml names its file://
		// dependencies from the repository's root, not the chart's directory:
		// the input error says the paths do not exist (issue 40 item 4), not
		// that flipflop does not download charts.
		{name: "rewyekha v1.5.0", paths: []string{
			"rewyekha__microservice-helmcharts/argocd", "rewyekha__microservice-helmcharts/env",
			"rewyekha__microservice-helmcharts/kargo", "rewyekha__microservice-helmcharts/service-charts",
		}, kargo: "v1.5.0", warnings: []string{"shared-write-branch"},
			inputErrors: append(valuesAsResources("dev", "staging", "prod"), inputError{"service-charts/Chart.yaml",
				"file:// dependencies name directories that do not exist (the path is relative to the chart's directory"}),
			check: func(t *testing.T, r *evaluator.Report, _ []evaluator.Object) {
				wantStages(t, r, "shared-write-branch", craftista)
				for _, e := range r.Errors {
					if strings.Contains(e.Message, "does not download charts") {
						t.Errorf("a file:// dependency called a download: %s", e)
					}
				}
			}},
		{name: "rewyekha at-c7c4320 v1.5.0", paths: []string{"rewyekha__microservice-helmcharts/at-c7c4320"}, kargo: "v1.5.0",
			warnings:    []string{"unknown-promotion-task"},
			inputErrors: []inputError{{"service-charts/Chart.yaml", "at-c7c4320/service-charts/service-charts/catalogue does not exist"}},
			check: func(t *testing.T, r *evaluator.Report, objs []evaluator.Object) {
				wantStages(t, r, "unknown-promotion-task", each("craftista", "frontend-dev-stage", "frontend-staging-stage")...)
			}},
	}
}
