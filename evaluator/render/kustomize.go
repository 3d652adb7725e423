package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// originAnnotation is where kustomize records the file a resource came from
// (buildMetadata: [originAnnotations]).
const originAnnotation = "config.kubernetes.io/origin"

// maxKustomizations bounds how many kustomizations one build may reach.
const maxKustomizations = 1000

// renderKustomize builds the kustomization in dir with kustomize's own API:
// no plugins, no exec functions, no Helm, no network (a remote base or file is
// an error naming it, found before kustomize runs, so kustomize never tries to
// clone or download), reads confined to the roots. Each resource keeps the
// file it came from (kustomize's origin annotation, then removed) and, when
// the document can be found in that file, its line.
func renderKustomize(c *confined, dir string, out *response) {
	kfile := loader.KustomizationFile(dir)
	if kfile == "" {
		out.fail(c.Show(dir), 0, "no kustomization file")
		return
	}
	real, err := c.resolve(kfile)
	if err != nil {
		out.fail(c.Show(kfile), 0, err.Error())
		return
	}
	file, line, msg, bases := prescan(c, dir)
	if msg != "" {
		out.fail(file, line, msg)
		return
	}
	out.Bases = bases
	data, err := c.ReadFile(kfile)
	if err != nil {
		out.fail(c.Show(real), 0, c.ShowAll(err.Error()))
		return
	}
	withOrigin, err := addOriginAnnotations(data)
	if err != nil {
		out.fail(c.Show(real), 0, "cannot read the kustomization: "+err.Error())
		return
	}
	c.Override(real, withOrigin)

	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	m, err := krusty.MakeKustomizer(opts).Run(c, dir)
	if err != nil {
		out.fail(c.Show(real), 0, "kustomize: "+c.ShowAll(err.Error()))
		return
	}
	lines := map[string][]evaluator.Object{}
	for _, r := range m.Resources() {
		if !out.allKinds && !evaluator.ReadKind(r.GetApiVersion(), r.GetKind()) {
			out.Skipped++ // no rule reads it: never sent, never converted
			continue
		}
		file, line := c.Show(real), 0
		if o, err := r.GetOrigin(); err == nil && o != nil && o.Path != "" && o.Repo == "" {
			src := filepath.Join(dir, filepath.FromSlash(o.Path))
			if rs, err := c.resolve(src); err == nil {
				file = c.Show(rs)
				line = sourceLine(c, rs, r, lines, out.decode)
			}
		}
		annotations := r.GetAnnotations()
		delete(annotations, originAnnotation)
		if err := r.SetAnnotations(annotations); err != nil {
			out.fail(c.Show(real), 0, err.Error())
			return
		}
		text, err := r.AsYAML()
		if err != nil {
			out.fail(file, line, err.Error())
			return
		}
		out.Documents = append(out.Documents, document{File: file, Line: line, Text: string(text)})
		if err := out.grow(len(text)); err != nil {
			out.fail(c.Show(real), 0, err.Error())
			return
		}
		if err := out.keep(len(text)); err != nil {
			out.fail(c.Show(real), 0, err.Error())
			return
		}
	}
}

// addOriginAnnotations adds originAnnotations to a kustomization's
// buildMetadata (kustomize passes it on to the kustomizations it reads).
func addOriginAnnotations(data []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return []byte("buildMetadata: [originAnnotations]\n"), nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the kustomization is not a mapping")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "buildMetadata" {
			seq := root.Content[i+1]
			if seq.Kind != yaml.SequenceNode {
				return nil, fmt.Errorf("buildMetadata is not a list")
			}
			for _, n := range seq.Content {
				if n.Value == types.OriginAnnotations {
					return data, nil
				}
			}
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: types.OriginAnnotations})
			return yaml.Marshal(&doc)
		}
	}
	root.Content = append(root.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "buildMetadata"},
		&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: types.OriginAnnotations}}},
	)
	return yaml.Marshal(&doc)
}

// sourceLine finds the line of a built resource in the file it came from: the
// document of the same kind whose name the built name contains (name
// prefixes and suffixes), preferring the same name, when exactly one fits.
func sourceLine(c *confined, real string, r *resource.Resource, cache map[string][]evaluator.Object, decode loader.DecodeFunc) int {
	objs, ok := cache[real]
	if !ok {
		if data, found := c.Content(real); found {
			objs, _, _ = decode(real, data, false)
		}
		cache[real] = objs
	}
	kind, name := r.GetKind(), r.GetName()
	var same, contained []int
	for _, o := range objs {
		if o.Kind != kind || o.Name == "" {
			continue
		}
		switch {
		case o.Name == name:
			same = append(same, o.Line)
		case strings.Contains(name, o.Name):
			contained = append(contained, o.Line)
		}
	}
	switch {
	case len(same) == 1:
		return same[0]
	case len(same) == 0 && len(contained) == 1:
		return contained[0]
	}
	return 0
}

// prescan reads the kustomizations dir reaches, before kustomize runs, and
// returns the file, line and message of the first reference flipflop must not
// follow: a remote base or file (kustomize would clone or download it) or a
// Helm chart (kustomize would run the helm binary). It also returns the
// directories other than dir that kustomize builds as kustomizations (real
// paths): those a resources, bases, components, generators, transformers or
// validators entry names. A kustomization file read only as data (a
// generator's file source, a patch path) is not one of them.
func prescan(c *confined, dir string) (file string, line int, msg string, bases []string) {
	seen := map[string]bool{}
	defer func() {
		top, _ := c.resolve(dir)
		for d := range seen {
			if d != top && loader.KustomizationFile(d) != "" {
				bases = append(bases, d)
			}
		}
		slices.Sort(bases)
	}()
	var visit func(dir string) (string, int, string)
	visit = func(dir string) (string, int, string) {
		real, err := c.resolve(dir)
		if err != nil || seen[real] {
			return "", 0, "" // kustomize reports what is outside or missing
		}
		seen[real] = true
		if len(seen) > maxKustomizations {
			return c.Show(real), 0, fmt.Sprintf("more than %d kustomizations are reached from here", maxKustomizations)
		}
		kfile := loader.KustomizationFile(real)
		if kfile == "" {
			return "", 0, ""
		}
		data, err := c.ReadFile(kfile)
		if err != nil {
			return "", 0, ""
		}
		var k types.Kustomization
		if err := sigsyaml.Unmarshal(data, &k); err != nil {
			return "", 0, "" // kustomize reports it
		}
		shown := c.Show(kfile)
		if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 {
			var charts []string
			for _, h := range k.HelmCharts {
				c := strings.TrimSpace(h.Name + " " + h.Version)
				if h.Repo != "" {
					c += " from " + h.Repo
				}
				charts = append(charts, quoted(c))
			}
			return shown, keyLine(data, "helmCharts", "helmChartInflationGenerator"), fmt.Sprintf(
				"helmCharts %s: kustomize inflates them by running the helm program (and downloads remote charts), which flipflop never does; give a vendored chart's directory (with Chart.yaml) instead, or --read plain",
				strings.Join(charts, ", "))
		}
		for _, ref := range fileRefs(&k) {
			if remote(ref) {
				return shown, valueLine(data, ref), fmt.Sprintf("remote reference %s: flipflop does not fetch (no network); vendor it into the repository or check the manifests it yields", quoted(ref))
			}
		}
		for _, ref := range dirRefs(&k) {
			if remote(ref) {
				return shown, valueLine(data, ref), fmt.Sprintf("remote base %s: flipflop does not fetch (no network); vendor it into the repository or check the manifests it yields", quoted(ref))
			}
			sub := filepath.Join(real, filepath.FromSlash(ref))
			if c.IsDir(sub) {
				if file, line, msg := visit(sub); msg != "" {
					return file, line, msg
				}
			}
		}
		return "", 0, ""
	}
	file, line, msg = visit(dir)
	return file, line, msg, nil
}

// dirRefs are the references kustomize may load as kustomizations (or clone).
func dirRefs(k *types.Kustomization) []string {
	return slices.Concat(k.Resources, k.Bases, k.Components, k.Generators, k.Transformers, k.Validators)
}

// fileRefs are the references kustomize loads as files (or downloads).
func fileRefs(k *types.Kustomization) []string {
	refs := slices.Concat(k.Crds, k.Configurations)
	if p := k.OpenAPI["path"]; p != "" {
		refs = append(refs, p)
	}
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) {
		refs = append(refs, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge {
		if s := string(p); !strings.Contains(s, "\n") {
			refs = append(refs, s)
		}
	}
	for _, r := range k.Replacements {
		refs = append(refs, r.Path)
	}
	var kv []types.KvPairSources
	for _, g := range k.ConfigMapGenerator {
		kv = append(kv, g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kv = append(kv, g.KvPairSources)
	}
	for _, s := range kv {
		for _, f := range s.FileSources {
			if _, path, ok := strings.Cut(f, "="); ok {
				f = path
			}
			refs = append(refs, f)
		}
		refs = append(refs, s.EnvSources...)
		refs = append(refs, s.EnvSource)
	}
	return slices.DeleteFunc(refs, func(s string) bool { return strings.TrimSpace(s) == "" })
}

var userAt = regexp.MustCompile(`^[a-z][a-z0-9-]*@`)

// remote reports whether kustomize could treat ref as a remote repository or
// file (clone it with git, or download it): any URL scheme, an scp-style
// user@host, a github.com path. It errs on the side of remote.
func remote(ref string) bool {
	s := strings.ToLower(strings.TrimSpace(ref))
	s = strings.TrimPrefix(s, "git::")
	return strings.Contains(s, "://") ||
		strings.HasPrefix(s, "http:") || strings.HasPrefix(s, "https:") ||
		userAt.MatchString(s) ||
		strings.HasPrefix(s, "github.com/") || strings.HasPrefix(s, "github.com:")
}

// quoted renders a reference read from input for a message.
func quoted(s string) string { return strconv.Quote(s) }

// valueLine is the line of the first scalar equal to v in a YAML file (0 when
// not found).
func valueLine(data []byte, v string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return 0
	}
	var find func(n *yaml.Node) int
	find = func(n *yaml.Node) int {
		if n.Kind == yaml.ScalarNode && n.Value == v {
			return n.Line
		}
		for _, c := range n.Content {
			if l := find(c); l > 0 {
				return l
			}
		}
		return 0
	}
	return find(&doc)
}

// keyLine is the line of the first top-level key among keys (0 when absent).
func keyLine(data []byte, keys ...string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if slices.Contains(keys, root.Content[i].Value) {
			return root.Content[i].Line
		}
	}
	return 0
}
