package tests

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// goreleaserConfig is the part of .goreleaser.yaml the tests compare.
type goreleaserConfig struct {
	ProjectName string `json:"project_name"`
	Builds      []struct {
		ID      string   `json:"id"`
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Env     []string `json:"env"`
		Flags   []string `json:"flags"`
		Ldflags []string `json:"ldflags"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
		Ignore  []struct {
			Goos   string `json:"goos"`
			Goarch string `json:"goarch"`
		} `json:"ignore"`
	} `json:"builds"`
	Archives []struct {
		NameTemplate    string   `json:"name_template"`
		Formats         []string `json:"formats"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
		Files []string `json:"files"`
	} `json:"archives"`
	Before struct {
		Hooks []string `json:"hooks"`
	} `json:"before"`
	Release struct {
		ExtraFiles []struct {
			Glob string `json:"glob"`
		} `json:"extra_files"`
	} `json:"release"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
		Algorithm    string `json:"algorithm"`
	} `json:"checksum"`
	Kos []struct {
		Build        string   `json:"build"`
		BaseImage    string   `json:"base_image"`
		Repositories []string `json:"repositories"`
		Bare         bool     `json:"bare"`
		Platforms    []string `json:"platforms"`
		Tags         []string `json:"tags"`
	} `json:"kos"`
}

type koConfig struct {
	DefaultBaseImage string   `json:"defaultBaseImage"`
	DefaultPlatforms []string `json:"defaultPlatforms"`
	Builds           []struct {
		Main    string   `json:"main"`
		Env     []string `json:"env"`
		Flags   []string `json:"flags"`
		Ldflags []string `json:"ldflags"`
	} `json:"builds"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	var c goreleaserConfig
	readYAML(t, "../.goreleaser.yaml", &c)
	if len(c.Builds) != 1 || len(c.Archives) != 1 || len(c.Kos) != 1 {
		t.Fatalf(".goreleaser.yaml: want one build, one archive and one ko image, got %d, %d, %d", len(c.Builds), len(c.Archives), len(c.Kos))
	}
	return c
}

// The release configuration agrees with itself and with everything that names
// what a release publishes: the version variables the ldflags set exist, the
// ko configuration builds the same binary on the same base, the CronJob runs
// the published image, and the krew manifest names exactly the archives.
func TestReleaseConfiguration(t *testing.T) {
	c := loadGoreleaser(t)
	b := c.Builds[0]
	if b.Main != "./cmd/flipflop" || b.Binary != "flipflop" {
		t.Errorf("build main %q binary %q", b.Main, b.Binary)
	}

	// Every -X names a string variable of internal/version.
	vars := packageVars(t, "../internal/version")
	xflag := regexp.MustCompile(`-X (\S+)\.(\w+)=`)
	set := map[string]bool{}
	for _, l := range b.Ldflags {
		for _, m := range xflag.FindAllStringSubmatch(l, -1) {
			if m[1] != "github.com/flipflop-dev/flipflop/internal/version" || !vars[m[2]] {
				t.Errorf("ldflags set %s.%s, which internal/version does not declare", m[1], m[2])
			}
			set[m[2]] = true
		}
	}
	for _, v := range []string{"version", "commit", "date"} {
		if !set[v] {
			t.Errorf("release builds do not stamp internal/version.%s", v)
		}
	}

	// .ko.yaml builds the same binary on the same base as the release's image.
	var ko koConfig
	readYAML(t, "../.ko.yaml", &ko)
	k := c.Kos[0]
	if ko.DefaultBaseImage != k.BaseImage || !slices.Equal(ko.DefaultPlatforms, k.Platforms) {
		t.Errorf(".ko.yaml base %s %v, release image base %s %v", ko.DefaultBaseImage, ko.DefaultPlatforms, k.BaseImage, k.Platforms)
	}
	if len(ko.Builds) != 1 || ko.Builds[0].Main != b.Main || !slices.Equal(ko.Builds[0].Env, b.Env) || !slices.Equal(ko.Builds[0].Flags, b.Flags) ||
		len(ko.Builds[0].Ldflags) == 0 || ko.Builds[0].Ldflags[0] != b.Ldflags[0] {
		t.Errorf(".ko.yaml builds %+v differ from the release build %+v", ko.Builds, b)
	}
	if k.Build != b.ID || !k.Bare || len(k.Repositories) != 1 {
		t.Fatalf("kos: %+v", k)
	}
	if !strings.Contains(strings.Join(k.Tags, " "), "latest") || !strings.Contains(strings.Join(k.Tags, " "), "{{ .Tag }}") {
		t.Errorf("the image is not tagged with the release tag and latest: %v", k.Tags)
	}

	// The chart runs the image the release publishes, tagged with the
	// chart's appVersion (hack/chartpackage sets it to the release's).
	var values struct {
		Image struct{ Repository, Tag string }
	}
	readYAML(t, "../charts/flipflop/values.yaml", &values)
	if values.Image.Repository != k.Repositories[0] || values.Image.Tag != "" {
		t.Errorf("the chart runs %s:%s, not the release's image %s at the chart's appVersion", values.Image.Repository, values.Image.Tag, k.Repositories[0])
	}

	// The krew manifest names exactly the archives the release builds.
	archive := func(goos, goarch string) string {
		ext := c.Archives[0].Formats[0]
		for _, o := range c.Archives[0].FormatOverrides {
			if o.Goos == goos {
				ext = o.Formats[0]
			}
		}
		name := strings.NewReplacer("{{ .ProjectName }}", c.ProjectName, "{{ .Tag }}", "v1.2.3", "{{ .Os }}", goos, "{{ .Arch }}", goarch).Replace(c.Archives[0].NameTemplate)
		if strings.Contains(name, "{{") {
			t.Fatalf("archive name_template %q uses fields this test does not know", c.Archives[0].NameTemplate)
		}
		return name + "." + ext
	}
	want := map[string]string{} // archive -> binary in it
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			if slices.ContainsFunc(b.Ignore, func(i struct {
				Goos   string `json:"goos"`
				Goarch string `json:"goarch"`
			}) bool {
				return i.Goos == goos && i.Goarch == goarch
			}) {
				continue
			}
			bin := b.Binary
			if goos == "windows" {
				bin += ".exe"
			}
			want[archive(goos, goarch)] = bin
		}
	}
	checksums := map[string]string{}
	for a := range want {
		checksums[a] = fmt.Sprintf("%s%02d", strings.Repeat("ab", 31), len(a))
	}
	manifest := renderKrew(t, "v1.2.3", checksums)
	got := map[string]string{}
	for _, p := range manifest.Spec.Platforms {
		name := p.URI[strings.LastIndex(p.URI, "/")+1:]
		if !strings.HasPrefix(p.URI, "https://github.com/flipflop-dev/flipflop/releases/download/v1.2.3/") {
			t.Errorf("krew platform %v downloads %s", p.Selector, p.URI)
		}
		if p.Sha256 != checksums[name] {
			t.Errorf("krew platform %s: sha256 %q", name, p.Sha256)
		}
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		if name != archive(os, arch) {
			t.Errorf("krew platform %s/%s downloads %s, want %s", os, arch, name, archive(os, arch))
		}
		got[name] = p.Bin
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("krew manifest archives %v, release archives %v", got, want)
	}
	if manifest.Metadata.Name != "flipflop" || manifest.Spec.Version != "v1.2.3" || manifest.Spec.ShortDescription == "" {
		t.Errorf("krew manifest: %+v", manifest)
	}
}

// packageVars lists the package-level variables of the Go package in dir.
func packageVars(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						vars[n.Name] = true
					}
				}
			}
		}
	}
	return vars
}

type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		ShortDescription string `json:"shortDescription"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// renderKrew fills deploy/krew/flipflop.yaml as krew-release-bot does: the
// template gets TagName, and addURIAndSha renders its URL with TagName and
// adds the archive's sha256 (here from checksums, by file name).
func renderKrew(t *testing.T, tag string, checksums map[string]string) krewPlugin {
	t.Helper()
	src, err := os.ReadFile("../deploy/krew/flipflop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]string{"TagName": tag}
	funcs := template.FuncMap{"addURIAndSha": func(url, tag string) (string, error) {
		var b bytes.Buffer
		if err := template.Must(template.New("url").Parse(url)).Execute(&b, data); err != nil {
			return "", err
		}
		uri := b.String()
		sha, ok := checksums[uri[strings.LastIndex(uri, "/")+1:]]
		if !ok {
			return "", fmt.Errorf("no release archive %s", uri)
		}
		return fmt.Sprintf("uri: %s\n    sha256: %s", uri, sha), nil
	}}
	tmpl, err := template.New("krew").Funcs(funcs).Parse(string(src))
	if err != nil {
		t.Fatalf("deploy/krew/flipflop.yaml: %v", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		t.Fatalf("deploy/krew/flipflop.yaml: %v", err)
	}
	var p krewPlugin
	if err := yaml.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("rendered krew manifest: %v\n%s", err, out.String())
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" {
		t.Fatalf("rendered krew manifest: %s %s", p.APIVersion, p.Kind)
	}
	return p
}

// GoReleaser itself accepts the configuration.
func TestGoreleaserCheck(t *testing.T) {
	gr := tool(t, "GORELEASER_BIN")
	stdout, stderr, code := runCmd(t, "..", gr, "check")
	if code != 0 {
		t.Fatalf("goreleaser check: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A snapshot build of this host's target with the release configuration
// carries the version and commit in `flipflop version`. It compiles flipflop
// with the release's flags (-trimpath, no cgo), which nothing else builds: a
// cold compile of every dependency, so it runs only when asked
// (FLIPFLOP_RELEASE_SNAPSHOT=1, as `make release-test` does).
func TestGoreleaserSnapshot(t *testing.T) {
	if os.Getenv("FLIPFLOP_RELEASE_SNAPSHOT") != "1" {
		t.Skip("set FLIPFLOP_RELEASE_SNAPSHOT=1 (make release-test) to build a release snapshot")
	}
	gr := tool(t, "GORELEASER_BIN")
	head, err := exec.Command("git", "-C", "..", "rev-parse", "HEAD").Output()
	if err != nil || len(head) == 0 {
		t.Skip("not a Git checkout: GoReleaser needs one")
	}
	dist := t.TempDir()
	bin := filepath.Join(t.TempDir(), "flipflop")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// The same configuration with dist/ in a temporary directory, so the test
	// never touches the work tree.
	cfg := filepath.Join(dist, "goreleaser.yaml")
	orig, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(orig, []byte("\ndist: "+filepath.Join(dist, "dist")+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	// --skip=before: the hook packages the chart into the work tree's out/
	// (TestReleasePackagesTheChart, charts.TestPackage).
	stdout, stderr, code := runCmd(t, "..", gr, "build", "--config", cfg, "--snapshot", "--single-target", "--skip=before", "--output", bin)
	if code != 0 {
		t.Fatalf("goreleaser build --snapshot: exit %d\n%s%s", code, stdout, stderr)
	}
	out, _, code := runCmd(t, ".", bin, "version")
	if code != 0 || !regexp.MustCompile(`(?m)^flipflop\s+v\d+\.\d+\.\d+-snapshot\+\S+$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^commit\s+`+strings.TrimSpace(string(head))+`$`).MatchString(out) {
		t.Errorf("the snapshot binary does not carry its version and commit (HEAD %s):\n%s", head, out)
	}
}

// The release attaches the Helm chart: a hook packages it (hack/chartpackage,
// with the release's version) where release.extra_files takes it from.
func TestReleasePackagesTheChart(t *testing.T) {
	c := loadGoreleaser(t)
	if len(c.Before.Hooks) != 1 || c.Before.Hooks[0] != "go run ./hack/chartpackage -version {{ .Version }} -out out/chart" {
		t.Fatalf("before hooks %q", c.Before.Hooks)
	}
	if len(c.Release.ExtraFiles) != 1 || c.Release.ExtraFiles[0].Glob != "./out/chart/flipflop-{{ .Version }}.tgz" {
		t.Fatalf("release extra_files %+v", c.Release.ExtraFiles)
	}
	dir := t.TempDir()
	_, stderr, code := runCmd(t, "..", "go", "run", "./hack/chartpackage", "-version", "1.2.3", "-out", dir)
	if code != 0 {
		t.Fatalf("chartpackage: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "flipflop-1.2.3.tgz")); err != nil {
		t.Fatal(err)
	}
}
