package estate

import (
	"fmt"
	"strings"
)

// Shapes names the estates built around one join each, for the scaling
// benchmarks of issue 15: doubling n must at most double the time.
//
//   - selector: n Stages, each reaching its Application through an argocd-update
//     label selector (pairs of Stages share a branch: n/2 contradictions);
//   - pattern: n Stages naming Applications that only a git-generator
//     ApplicationSet's name pattern can produce (one ApplicationSet a Stage);
//   - merge: one ApplicationSet whose merge generator joins two list generators
//     of n elements each by a merge key, and n/10 Stages reaching some of them;
//   - branch: n Stages in one project, each pinning its own Application, all on
//     the main branch of one repository (one contradiction of n Stages);
//   - monorepo: n/2 teams of two Stages with a branch each, every Application in
//     one repository (clean: what "related objects only" cannot narrow);
//   - matrix: one ApplicationSet whose matrix generator combines two list
//     generators of n elements each (n² Applications: past n = 70, more than
//     flipflop builds for one ApplicationSet), and n/10 Stages naming some of
//     them (issue 20: the work must grow with the lists, not their product);
//   - pull-requests: a Stage of n pushes to generated branches, each carried by
//     its own git-open-pr into main, where an Application it pins tracks; and a
//     Stage of n such pushes and n git-open-pr steps that name none of them
//     (each push may go through each: n² pairs, followed up to a bound);
//   - vars: a Stage of n vars and n promotionTemplate vars running a
//     PromotionTask of n vars, whose steps read them (each var used to scan
//     every var);
//   - step-vars: a Stage of n vars and n pushes, each with a var of its own
//     (each step's vars used to be merged with a copy of every Stage var).
//
// Not yet in Shapes (still quadratic; see docs/security.md): one-path, a Stage
// of n clones into one path and n pushes from it (each push is paired with
// every clone), and work-trees, a Stage of n clones into n paths and n
// pushes, one from each (each push's work tree is found by scanning every
// clone).
var Shapes = []string{"selector", "pattern", "merge", "branch", "monorepo", "matrix", "pull-requests", "vars", "step-vars"}

// Shape returns the files of the estate shape name at size n (see Shapes).
func Shape(name string, n int) ([]File, error) {
	var docs []string
	switch name {
	case "selector":
		docs = selectorShape(n)
	case "pattern":
		docs = patternShape(n)
	case "merge":
		docs = mergeShape(n)
	case "branch":
		docs = branchShape(n)
	case "monorepo":
		docs = monorepoShape(n)
	case "matrix":
		docs = matrixShape(n)
	case "pull-requests":
		docs = pullRequestsShape(n)
	case "vars":
		docs = varsShape(n)
	case "step-vars":
		docs = stepVarsShape(n)
	case "one-path":
		docs = clonesShape(n, false)
	case "work-trees":
		docs = clonesShape(n, true)
	default:
		return nil, fmt.Errorf("unknown estate shape %q (want one of %s)", name, strings.Join(Shapes, ", "))
	}
	const perFile = 25
	var files []File
	for i := 0; i < len(docs); i += perFile {
		end := min(i+perFile, len(docs))
		files = append(files, File{
			Path:    fmt.Sprintf("%s/part-%03d/manifests-%05d.yaml", name, i/(perFile*50), i/perFile),
			Content: []byte(strings.Join(docs[i:end], "---\n")),
		})
	}
	return files, nil
}

// shapeStage is an inline-step Stage that pushes to branch of repo and runs
// argocd-update with the apps entry given (indented as a list item).
func shapeStage(name, project, repo, branch, entry string) string {
	return fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
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
      - uses: git-commit
        as: commit
        config: {path: ./repo, message: promote}
      - uses: git-push
        as: push
        config: {path: ./repo}
      - uses: argocd-update
        config:
          apps:
%s            sources:
            - repoURL: %s
              desiredRevision: ${{ outputs.push.commit }}
`, name, project, repo, branch, entry, repo)
}

func selectorShape(n int) []string {
	var docs []string
	for i := range n {
		project := fmt.Sprintf("team-%05d", i)
		app := project + "-dev"
		repo := fmt.Sprintf("https://git.example.com/sel/pair-%05d.git", i/2)
		docs = append(docs, application(app, repo, "main", project+":dev"))
		entry := fmt.Sprintf("          - selector:\n              matchLabels: {app.kubernetes.io/part-of: %s}\n", app)
		docs = append(docs, shapeStage("dev", project, repo, "main", entry))
	}
	return docs
}

func patternShape(n int) []string {
	var docs []string
	for i := range n {
		project := fmt.Sprintf("team-%05d", i)
		repo := fmt.Sprintf("https://git.example.com/pat/%s.git", project)
		docs = append(docs, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: %s
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: %s
      revision: main
      directories: [{path: 'env/*'}]
  template:
    metadata:
      name: '%s-{{.path.basename}}'
      annotations:
        kargo.akuity.io/authorized-stage: '%s:{{.path.basename}}'
    spec:
      project: default
      source: {repoURL: %s, targetRevision: 'env/%s/{{.path.basename}}', path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '%s-{{.path.basename}}'}
`, project, repo, project, project, repo, project, project))
		entry := fmt.Sprintf("          - name: %s-dev\n", project)
		docs = append(docs, shapeStage("dev", project, repo, "env/"+project+"/dev", entry))
	}
	return docs
}

func mergeShape(n int) []string {
	var base, over []string
	for i := range n {
		base = append(base, fmt.Sprintf("          - {name: app-%05d, team: team-%05d}", i, i/10))
		over = append(over, fmt.Sprintf("          - {name: app-%05d, branch: env/app-%05d}", i, i))
	}
	repo := "https://git.example.com/merge/fleet.git"
	docs := []string{fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - merge:
      mergeKeys: [name]
      generators:
      - list:
          elements:
%s
      - list:
          elements:
%s
  template:
    metadata:
      name: '{{.name}}'
      annotations:
        kargo.akuity.io/authorized-stage: '{{.team}}:{{.name}}'
    spec:
      project: default
      source: {repoURL: %s, targetRevision: '{{.branch}}', path: 'apps/{{.name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.name}}'}
`, strings.Join(base, "\n"), strings.Join(over, "\n"), repo)}
	for i := 0; i < n; i += 10 {
		app := fmt.Sprintf("app-%05d", i)
		entry := fmt.Sprintf("          - name: %s\n", app)
		docs = append(docs, shapeStage(app, fmt.Sprintf("team-%05d", i/10), repo, "env/"+app, entry))
	}
	return docs
}

func branchShape(n int) []string {
	var docs []string
	repo := "https://git.example.com/branch/one.git"
	for i := range n {
		stage := fmt.Sprintf("s-%05d", i)
		app := "one-" + stage
		docs = append(docs, application(app, repo, "main", "one:"+stage))
		docs = append(docs, shapeStage(stage, "one", repo, "main", fmt.Sprintf("          - name: %s\n", app)))
	}
	return docs
}

func monorepoShape(n int) []string {
	var docs []string
	repo := "https://git.example.com/mono/everything.git"
	for t := 0; t < n/2; t++ {
		project := fmt.Sprintf("team-%05d", t)
		docs = append(docs, pipeline(project, repo, 2, "", true)...)
	}
	return docs
}

func matrixShape(n int) []string {
	var envs, regions []string
	for i := range n {
		envs = append(envs, fmt.Sprintf("          - {env: e%05d}", i))
		regions = append(regions, fmt.Sprintf("          - {region: r%05d}", i))
	}
	repo := "https://git.example.com/matrix/fleet.git"
	docs := []string{fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - list:
          elements:
%s
      - list:
          elements:
%s
  template:
    metadata:
      name: 'fleet-{{.env}}-{{.region}}'
      annotations:
        kargo.akuity.io/authorized-stage: 'fleet:{{.env}}'
    spec:
      project: default
      source: {repoURL: %s, targetRevision: 'env/{{.env}}', path: '{{.region}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.env}}'}
`, strings.Join(envs, "\n"), strings.Join(regions, "\n"), repo)}
	for i := 0; i < n; i += 10 {
		env := fmt.Sprintf("e%05d", i)
		entry := fmt.Sprintf("          - name: fleet-%s-r%05d\n", env, i)
		docs = append(docs, shapeStage(env, "fleet", repo, "env/"+env, entry))
	}
	return docs
}

// stageHead is the start of a Stage of project acme whose promotion steps
// follow (each a list item indented by 6).
func stageHead(name string) string {
	return fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: %s, namespace: acme}
spec:
  requestedFreight:
  - origin: {kind: Warehouse, name: app}
    sources: {direct: true}
  promotionTemplate:
    spec:
      steps:
      - uses: git-clone
        config:
          repoURL: https://github.com/acme/prs.git
          checkout: [{branch: main, path: ./repo}]
`, name)
}

func pullRequestsShape(n int) []string {
	repo := "https://github.com/acme/prs.git"
	linked, unlinked := stageHead("linked"), stageHead("unlinked")
	for i := range n {
		linked += fmt.Sprintf("      - {uses: git-push, as: push-%05d, config: {path: ./repo, generateTargetBranch: true}}\n", i)
		unlinked += fmt.Sprintf("      - {uses: git-push, as: push-%05d, config: {path: ./repo, generateTargetBranch: true}}\n", i)
	}
	for i := range n {
		linked += fmt.Sprintf("      - {uses: git-open-pr, as: pr-%05d, config: {repoURL: %s, sourceBranch: '${{ outputs.push-%05d.branch }}', targetBranch: main}}\n", i, repo, i)
		unlinked += fmt.Sprintf("      - {uses: git-open-pr, as: pr-%05d, config: {repoURL: %s, sourceBranch: '${{ ctx.promotion }}', targetBranch: env/%05d}}\n", i, repo, i)
	}
	linked += fmt.Sprintf(`      - uses: argocd-update
        config:
          apps:
          - name: linked
            sources:
            - repoURL: %s
              desiredRevision: ${{ outputs.push-00000.commit }}
`, repo)
	return []string{application("linked", repo, "main", "acme:linked"), linked, unlinked}
}

func varsShape(n int) []string {
	repo := "https://git.example.com/vars/deploy.git"
	var vars, tmplVars, taskVars strings.Builder
	for i := range n {
		fmt.Fprintf(&vars, "  - {name: v%05d, value: x%05d}\n", i, i)
		fmt.Fprintf(&tmplVars, "      - {name: t%05d, value: '${{ vars.v%05d }}'}\n", i, i)
		fmt.Fprintf(&taskVars, "  - {name: k%05d, value: y%05d}\n", i, i)
	}
	task := fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: PromotionTask
metadata: {name: render, namespace: acme}
spec:
  vars:
%s  steps:
  - uses: git-clone
    config:
      repoURL: '${{ vars.repo }}'
      checkout: [{branch: '${{ vars.k00000 }}', path: ./repo}]
  - uses: git-push
    config: {path: ./repo}
`, taskVars.String())
	stage := fmt.Sprintf(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: vars, namespace: acme}
spec:
  requestedFreight:
  - origin: {kind: Warehouse, name: app}
    sources: {direct: true}
  vars:
%s  promotionTemplate:
    spec:
      vars:
%s      - {name: repo, value: %s}
      steps:
      - task: {name: render}
      - uses: argocd-update
        config:
          apps:
          - name: vars
            sources:
            - repoURL: '${{ vars.repo }}'
              desiredRevision: '${{ vars.t00000 }}'
`, vars.String(), tmplVars.String(), repo)
	return []string{application("vars", repo, "y00000", "acme:vars"), task, stage}
}

func stepVarsShape(n int) []string {
	repo := "https://github.com/acme/prs.git"
	var vars strings.Builder
	for i := range n {
		fmt.Fprintf(&vars, "  - {name: v%05d, value: env/%05d}\n", i, i)
	}
	stage := strings.Replace(stageHead("step-vars"), "  promotionTemplate:\n", "  vars:\n"+vars.String()+"  promotionTemplate:\n", 1)
	for i := range n {
		stage += fmt.Sprintf("      - {uses: git-push, as: push-%05d, vars: [{name: b, value: '${{ vars.v%05d }}'}], config: {path: ./repo, targetBranch: '${{ vars.b }}'}}\n", i, i)
	}
	stage += fmt.Sprintf(`      - uses: argocd-update
        config:
          apps:
          - name: step-vars
            sources:
            - repoURL: %s
              desiredRevision: ${{ outputs.push-00000.commit }}
`, repo)
	return []string{application("step-vars", repo, "env/00000", "acme:step-vars"), stage}
}

// clonesShape is a Stage of n git-clone steps and n pushes: all into ./repo
// (paths false), or each into its own ./repo-<i> (paths true).
func clonesShape(n int, paths bool) []string {
	repo := "https://github.com/acme/prs.git"
	stage := stageHead("clones")
	path := func(i int) string {
		if paths {
			return fmt.Sprintf("./repo-%05d", i)
		}
		return "./repo"
	}
	for i := range n {
		stage += fmt.Sprintf("      - {uses: git-clone, config: {repoURL: %s, checkout: [{branch: env/%05d, path: %s}]}}\n", repo, i, path(i))
	}
	for i := range n {
		stage += fmt.Sprintf("      - {uses: git-push, as: push-%05d, config: {path: %s}}\n", i, path(i))
	}
	stage += fmt.Sprintf(`      - uses: argocd-update
        config:
          apps:
          - name: clones
            sources:
            - repoURL: %s
              desiredRevision: ${{ outputs.push-00000.commit }}
`, repo)
	return []string{application("clones", repo, "main", "acme:clones"), stage}
}
