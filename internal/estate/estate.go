// Package estate generates realistic, deterministic Kargo + Argo CD estates for
// benchmarks and scale tests: Applications across several repositories,
// branches and namespaces; Stages with inline steps and with PromotionTasks and
// vars; ApplicationSets; a known share of contradictions, foreign writers and
// stage-branch pipelines; spread over many files like a GitOps repository.
package estate

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Options shape a generated estate.
type Options struct {
	// Objects is the approximate number of Kubernetes objects to generate.
	Objects int
	// Seed makes the estate deterministic.
	Seed uint64
	// PerFile is how many documents go into one file (default 25).
	PerFile int
}

// File is one generated file.
type File struct {
	Path    string
	Content []byte
}

// Stats counts what was generated, so tests can assert findings.
type Stats struct {
	Objects int
	// Contradictions is the number of pipelines whose Stages pin Applications on
	// one shared branch: each yields one shared-branch-contradiction finding.
	Contradictions int
	// StageBranch is the number of pipelines with a branch per Stage (clean).
	StageBranch int
	// Unpinned is the number of shared-branch pipelines without desiredRevision (clean).
	Unpinned int
	// ApplicationSets is the number of ApplicationSet pipelines (shared branch, pinned).
	ApplicationSets int
}

// pipeline kinds, in the proportions a large estate might show.
const (
	kindContradiction = iota
	kindStageBranch
	kindUnpinned
	kindTaskStageBranch
	kindAppSet
)

// Generate returns the files of an estate and what they hold.
func Generate(o Options) ([]File, Stats) {
	if o.PerFile <= 0 {
		o.PerFile = 25
	}
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed))
	var docs []string
	var st Stats
	for p := 0; st.Objects < o.Objects; p++ {
		project := fmt.Sprintf("team-%04d", p)
		repo := fmt.Sprintf("https://git.example.com/org-%d/deploy-%d.git", p%7, p%97)
		stages := 2 + r.IntN(3)
		var d []string
		switch k := r.IntN(10); {
		case k < 2:
			d = pipeline(project, repo, stages, "main", true)
			st.Contradictions++
		case k < 5:
			d = pipeline(project, repo, stages, "", true)
			st.StageBranch++
		case k < 7:
			d = pipeline(project, repo, stages, "main", false)
			st.Unpinned++
		case k < 9:
			d = taskPipeline(project, repo, stages)
			st.StageBranch++
		default:
			d = appSetPipeline(project, repo, stages)
			st.ApplicationSets++
		}
		docs = append(docs, d...)
		st.Objects += len(d)
	}
	var files []File
	for i := 0; i < len(docs); i += o.PerFile {
		end := min(i+o.PerFile, len(docs))
		files = append(files, File{
			Path:    fmt.Sprintf("gitops/part-%03d/manifests-%05d.yaml", i/(o.PerFile*50), i/o.PerFile),
			Content: []byte(strings.Join(docs[i:end], "---\n")),
		})
	}
	return files, st
}

var stageNames = []string{"dev", "qa", "uat", "staging", "prod"}

// pipeline: one Application and one inline-step Stage per environment. shared
// names the branch every Stage pushes and every Application tracks; "" gives
// each Stage its own env/<stage> branch.
func pipeline(project, repo string, stages int, shared string, pin bool) []string {
	var docs []string
	for i := range stages {
		stage := stageNames[i]
		branch := shared
		if branch == "" {
			branch = "env/" + stage
		}
		app := project + "-" + stage
		docs = append(docs, application(app, repo, branch, project+":"+stage))
		update := fmt.Sprintf("          - name: %s\n", app)
		if pin {
			update += fmt.Sprintf("            sources:\n            - repoURL: %s\n              desiredRevision: ${{ outputs.push.commit }}\n", repo)
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata:
  name: %s
  namespace: %s
spec:
  requestedFreight:
  - origin: {kind: Warehouse, name: app}
    sources: {direct: true}
  promotionTemplate:
    spec:
      steps:
      - uses: git-clone
        config:
          repoURL: %s
          checkout:
          - branch: %s
            path: ./repo
      - uses: kustomize-set-image
        config:
          path: ./repo/env/%s
          images: [{image: ghcr.io/acme/app}]
      - uses: git-commit
        as: commit
        config: {path: ./repo, message: promote}
      - uses: git-push
        as: push
        config: {path: ./repo}
      - uses: argocd-update
        config:
          apps:
%s`, stage, project, repo, branch, stage, update))
	}
	return docs
}

func application(name, repo, branch, authorized string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
  labels: {app.kubernetes.io/part-of: %s}
  annotations:
    kargo.akuity.io/authorized-stage: %s
spec:
  project: default
  source:
    repoURL: %s
    targetRevision: %s
    path: .
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy:
    automated: {prune: true}
`, name, name, authorized, repo, branch, name)
}

// taskPipeline: Stages that run one PromotionTask rendering into env/<stage>.
func taskPipeline(project, repo string, stages int) []string {
	docs := []string{fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: PromotionTask
metadata:
  name: render
  namespace: %s
spec:
  vars:
  - name: repo
    value: %s
  - name: branch
    value: env/${{ ctx.stage }}
  steps:
  - uses: git-clone
    config:
      repoURL: ${{ vars.repo }}
      checkout:
      - {branch: main, path: ./src}
      - {branch: "${{ vars.branch }}", create: true, path: ./out}
  - uses: git-clear
    config: {path: ./out}
  - uses: kustomize-build
    config: {path: "./src/env/${{ ctx.stage }}", outPath: ./out/manifests.yaml}
  - uses: git-commit
    as: commit
    config: {path: ./out, message: render}
  - uses: git-push
    as: push
    config: {path: ./out}
  - uses: argocd-update
    config:
      apps:
      - name: %s-${{ ctx.stage }}
        sources:
        - repoURL: ${{ vars.repo }}
          desiredRevision: ${{ task.outputs.push.commit }}
`, project, repo, project)}
	for i := range stages {
		stage := stageNames[i]
		docs = append(docs, application(project+"-"+stage, repo, "env/"+stage, project+":"+stage))
		docs = append(docs, fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata:
  name: %s
  namespace: %s
spec:
  requestedFreight:
  - origin: {kind: Warehouse, name: app}
    sources: {direct: true}
  promotionTemplate:
    spec:
      steps:
      - task: {name: render}
`, stage, project))
	}
	return docs
}

// appSetPipeline: an ApplicationSet generating one Application per Stage on
// main, and pinned Stages: a contradiction through generated Applications.
func appSetPipeline(project, repo string, stages int) []string {
	var elems []string
	for i := range stages {
		elems = append(elems, "      - stage: "+stageNames[i])
	}
	docs := []string{fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: %s
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - list:
      elements:
%s
  template:
    metadata:
      name: '%s-{{.stage}}'
      annotations:
        kargo.akuity.io/authorized-stage: '%s:{{.stage}}'
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: 'env/{{.stage}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '%s-{{.stage}}'}
`, project, strings.Join(elems, "\n"), project, project, repo, project)}
	for i := range stages {
		stage := stageNames[i]
		docs = append(docs, fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata:
  name: %s
  namespace: %s
spec:
  promotionTemplate:
    spec:
      steps:
      - uses: git-clone
        config: {repoURL: %s, checkout: [{branch: main, path: ./repo}]}
      - uses: git-commit
        as: commit
        config: {path: ./repo, message: promote}
      - uses: git-push
        as: push
        config: {path: ./repo}
      - uses: argocd-update
        config:
          apps:
          - name: %s-%s
            sources: [{repoURL: %s, desiredRevision: "${{ outputs.push.commit }}"}]
`, stage, project, repo, project, stage, repo))
	}
	return docs
}
