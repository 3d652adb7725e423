package render

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	v2util "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/ignore"
	"helm.sh/helm/v4/pkg/strvals"
)

// HelmOptions are the values and release every chart is rendered with, as
// `helm template` takes them: the chart's values.yaml, then ValuesFiles in
// order, then Set and SetString in order, each over what comes before.
type HelmOptions struct {
	// ValuesFiles are values files (helm --values), in order, later ones
	// winning. The caller reads them: they come from the user, not from the
	// charts, and may live outside the Renderer's roots.
	ValuesFiles []ValuesFile `json:"valuesFiles,omitempty"`
	// Set are key=value values, as helm --set takes them, in order.
	Set []string `json:"set,omitempty"`
	// SetString are key=value string values, as helm --set-string takes
	// them, in order.
	SetString []string `json:"setString,omitempty"`
	// ReleaseName is .Release.Name; empty means the chart's name.
	ReleaseName string `json:"releaseName,omitempty"`
	// Namespace is .Release.Namespace; empty means "default", as Helm.
	Namespace string `json:"namespace,omitempty"`
}

// ValuesFile is a Helm values file: its name, as messages and
// evaluator.RenderedRoot.Values show it, and its YAML content.
type ValuesFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// renderHelm renders the chart in dir: default values, then the options'
// values, no cluster (`lookup` finds nothing), no DNS, no post-renderer, no
// schema fetches; dependencies must be vendored under charts/.
func renderHelm(ctx context.Context, c *confined, dir string, opts HelmOptions, out *response) {
	shownDir := c.Show(dir)
	files, err := chartFiles(c, dir)
	if err != nil {
		out.fail(shownDir+"/Chart.yaml", 0, "cannot read the chart: "+c.ShowAll(err.Error()))
		return
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		out.fail(shownDir+"/Chart.yaml", 0, "cannot load the chart: "+c.ShowAll(err.Error()))
		return
	}
	if err := ch.Validate(); err != nil {
		out.fail(shownDir+"/Chart.yaml", 0, "invalid chart: "+err.Error())
		return
	}
	out.Chart = strings.TrimSpace(ch.Name() + " " + ch.Metadata.Version)
	if missing := missingDependencies(ch, ""); len(missing) > 0 {
		out.fail(shownDir+"/Chart.yaml", 0, dependencyProblem(c, dir, missing))
		return
	}

	vals := map[string]any{}
	out.Values = append(out.Values, "values.yaml")
	for _, f := range opts.ValuesFiles {
		v, err := chartcommon.ReadValues(f.Data)
		if err != nil {
			out.fail(f.Name, 0, "cannot read values: "+err.Error())
			return
		}
		vals = loader.MergeMaps(vals, v)
		out.Values = append(out.Values, f.Name)
	}
	for _, s := range opts.Set {
		if err := strvals.ParseInto(s, vals); err != nil {
			out.fail(shownDir, 0, fmt.Sprintf("--set %s: %v", s, err))
			return
		}
		out.Values = append(out.Values, "--set "+s)
	}
	for _, s := range opts.SetString {
		if err := strvals.ParseIntoString(s, vals); err != nil {
			out.fail(shownDir, 0, fmt.Sprintf("--set-string %s: %v", s, err))
			return
		}
		out.Values = append(out.Values, "--set-string "+s)
	}
	if err := v2util.ProcessDependencies(ch, vals); err != nil {
		out.fail(shownDir+"/Chart.yaml", 0, "dependencies: "+err.Error())
		return
	}
	release := chartcommon.ReleaseOptions{Name: opts.ReleaseName, Namespace: opts.Namespace, Revision: 1, IsInstall: true}
	if release.Name == "" {
		release.Name = ch.Name()
	}
	if release.Namespace == "" {
		release.Namespace = "default"
	}
	// Schema validation is skipped: a values.schema.json may $ref URLs, and
	// flipflop never goes to the network.
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, release, nil, true)
	if err != nil {
		out.fail(shownDir, 0, "values: "+err.Error())
		return
	}
	rendered, err := engine.Engine{}.RenderWithContext(ctx, ch, top)
	if err != nil {
		file, line, msg := templateError(err.Error(), ch.Name())
		if file != "" {
			file = shownDir + "/" + file
		} else {
			file = shownDir
		}
		out.fail(file, line, c.ShowAll(msg))
		return
	}
	sources := templateSources(ch, "")
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if path.Base(name) == "NOTES.txt" {
			continue
		}
		text := rendered[name]
		if strings.TrimSpace(text) == "" {
			continue
		}
		rel := strings.TrimPrefix(name, ch.Name()+"/")
		file := shownDir + "/" + rel
		starts := documentLines(sources[name], text)
		if err := out.grow(len(text)); err != nil {
			out.fail(shownDir, 0, err.Error())
			return
		}
		for i, doc := range splitDocuments(text) {
			line := 0
			if i < len(starts) {
				line = starts[i]
			}
			if !out.allKinds {
				// Decoded here, inside the worker's limits: a document of a
				// kind no rule reads is dropped and counted, never sent.
				objs, errs, skipped := out.decode(file, []byte(doc.text), true)
				if len(objs) == 0 && len(errs) == 0 {
					out.Skipped += skipped
					continue
				}
			}
			if err := out.keep(len(doc.text)); err != nil {
				out.fail(shownDir, 0, err.Error())
				return
			}
			out.Documents = append(out.Documents, document{File: file, Line: line, Text: doc.text, Rendered: true})
		}
	}
}

// chartFiles reads the chart's files through the confined file system,
// honouring .helmignore as `helm` does. Symbolic links are followed only
// inside the roots.
func chartFiles(c *confined, dir string) ([]*archive.BufferedFile, error) {
	rules := ignore.Empty()
	if data, err := c.ReadFile(filepath.Join(dir, ignore.HelmIgnore)); err == nil {
		r, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		rules = r
	}
	rules.AddDefaults()
	var files []*archive.BufferedFile
	var walk func(d, rel string, depth int) error
	walk = func(d, rel string, depth int) error {
		if depth > 64 {
			return fmt.Errorf("%s: directories nested too deep", c.Show(d))
		}
		names, err := c.ReadDir(d)
		if err != nil {
			return err
		}
		slices.Sort(names)
		for _, name := range names {
			p := filepath.Join(d, name)
			n := path.Join(rel, name)
			real, err := c.resolveInside(p)
			if err != nil {
				return err // a link leaving the roots
			}
			fi, err := os.Stat(real)
			if err != nil {
				return err
			}
			if rules.Ignore(n, fi) {
				continue // Helm never reads it either
			}
			if err := c.checkExcluded(real); err != nil {
				return err // Helm would render it: the chart needs it
			}
			if fi.IsDir() {
				if err := walk(p, n, depth+1); err != nil {
					return err
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file (%s)", c.Show(real), fi.Mode().Type())
			}
			data, err := c.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, &archive.BufferedFile{Name: n, ModTime: fi.ModTime(), Data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))})
		}
		return nil
	}
	if err := walk(dir, "", 0); err != nil {
		return nil, err
	}
	return files, nil
}

// dependency is a Chart.yaml dependency that is not vendored under charts/:
// how a message names it, its repository, and whether the chart itself
// declares it (not one of its subcharts).
type dependency struct {
	label, repository string
	top               bool
}

// missingDependencies lists the Chart.yaml dependencies (at every level) that
// are not vendored under charts/.
func missingDependencies(ch *chart.Chart, parent string) []dependency {
	var missing []dependency
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if d == nil || have[d.Name] {
			continue
		}
		where := d.Repository
		if where == "" {
			where = "no repository"
		}
		missing = append(missing, dependency{
			label:      fmt.Sprintf("%s%s %s (%s)", parent, d.Name, d.Version, where),
			repository: d.Repository,
			top:        parent == "",
		})
	}
	for _, d := range ch.Dependencies() {
		missing = append(missing, missingDependencies(d, parent+d.Name()+" → ")...)
	}
	return missing
}

// dependencyProblem says why the chart in dir cannot be rendered for its
// missing dependencies, by kind: a file:// dependency of the chart whose
// directory does not exist (Helm resolves the path against the chart's
// directory, so `helm dependency build`, which Argo CD runs, fails too); one
// whose directory exists but was not built into charts/ (or lies outside
// the paths the run reads); and the others, which flipflop would have to
// download.
func dependencyProblem(c *confined, dir string, missing []dependency) string {
	var absent, local, outside, remote []string
	for _, d := range missing {
		p, ok := strings.CutPrefix(d.repository, "file://")
		if !ok || !d.top {
			remote = append(remote, d.label)
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, filepath.FromSlash(p))
		}
		real, err := c.resolve(p)
		switch {
		case err != nil:
			outside = append(outside, d.label+": "+c.ShowAll(err.Error()))
		case !isDir(real):
			absent = append(absent, d.label+": "+c.Show(p)+" does not exist")
		default:
			local = append(local, d.label)
		}
	}
	var parts []string
	if len(absent) > 0 {
		parts = append(parts, "file:// dependencies name directories that do not exist (the path is relative to the chart's directory, so `helm dependency build`, which Argo CD runs, fails as well): "+strings.Join(absent, "; "))
	}
	if len(local) > 0 {
		parts = append(parts, "file:// dependencies are not built into charts/ (flipflop renders what charts/ holds; `helm dependency build` copies them there, as Argo CD does before it renders): "+strings.Join(local, "; "))
	}
	if len(outside) > 0 {
		parts = append(parts, "file:// dependencies are not built into charts/, and flipflop may not read them where they are: "+strings.Join(outside, "; "))
	}
	if len(remote) > 0 {
		parts = append(parts, "dependencies are not vendored under charts/ (flipflop does not download charts): "+strings.Join(remote, "; "))
	}
	return strings.Join(parts, ". ")
}

// isDir reports whether the real path p is a directory.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// templateSources maps rendered template names to their source text.
func templateSources(ch *chart.Chart, prefix string) map[string]string {
	out := map[string]string{}
	base := path.Join(prefix, ch.Name())
	for _, t := range ch.Templates {
		out[path.Join(base, t.Name)] = string(t.Data)
	}
	for _, d := range ch.Dependencies() {
		for k, v := range templateSources(d, path.Join(base, "charts")) {
			out[k] = v
		}
	}
	return out
}

var templateErrorPattern = regexp.MustCompile(`([^\s():'"]+):(\d+)(?::\d+)?`)

// templateError finds the template file (relative to the chart) and line in a
// Helm render error: the first "<chart>/templates/x.yaml:LINE[:COL]" it names
// ("template: c/templates/x.yaml:3:6: ...", "execution error at
// (c/templates/x.yaml:3:6): ...").
func templateError(msg, chartName string) (string, int, string) {
	for _, m := range templateErrorPattern.FindAllStringSubmatch(msg, -1) {
		if !strings.HasPrefix(m[1], chartName+"/") {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		return strings.TrimPrefix(m[1], chartName+"/"), line, msg
	}
	return "", 0, msg
}

// renderedDoc is one document of a rendered template.
type renderedDoc struct {
	text string
}

// splitDocuments splits rendered output on "---" lines, dropping documents
// that hold nothing but comments and blank lines.
func splitDocuments(text string) []renderedDoc {
	var docs []renderedDoc
	var cur strings.Builder
	content := false
	flush := func() {
		if content {
			docs = append(docs, renderedDoc{text: cur.String()})
		}
		cur.Reset()
		content = false
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		t := strings.TrimRight(line, "\r\n")
		if t == "---" || strings.HasPrefix(t, "--- ") {
			flush()
			continue
		}
		cur.WriteString(line)
		if s := strings.TrimSpace(t); s != "" && !strings.HasPrefix(s, "#") {
			content = true
		}
	}
	flush()
	return docs
}

// documentLines returns, for each document of the rendered output, the line
// of the template where it starts, when that can be known: when the template
// source has as many documents as the output (each output document then comes
// from the source document in the same position), or when it has one document
// (a range over a list produces several documents from it). The line is the
// source document's first line that is not blank, a comment or a template
// action. Otherwise there is no line (nil).
func documentLines(source, rendered string) []int {
	if source == "" {
		return nil
	}
	srcDocs := sourceDocuments(source)
	n := len(splitDocuments(rendered))
	switch {
	case len(srcDocs) == n:
		return srcDocs
	case len(srcDocs) == 1:
		out := make([]int, n)
		for i := range out {
			out[i] = srcDocs[0]
		}
		return out
	}
	return nil
}

// sourceDocuments returns the first content line of each document of a
// template source (content: not blank, not a comment, not only a template action).
func sourceDocuments(source string) []int {
	var starts []int
	start := 0
	for i, line := range strings.Split(source, "\n") {
		t := strings.TrimSpace(strings.TrimRight(line, "\r"))
		if t == "---" || strings.HasPrefix(t, "--- ") {
			start = 0
			continue
		}
		if start == 0 && t != "" && !strings.HasPrefix(t, "#") && !onlyAction(t) {
			start = i + 1
			starts = append(starts, start)
		}
	}
	return starts
}

var actionPattern = regexp.MustCompile(`^(\{\{.*?\}\}\s*)+$`)

func onlyAction(line string) bool { return actionPattern.MatchString(line) }
