package estate

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/internal/race"
)

type doc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		Source struct {
			RepoURL        string `yaml:"repoURL"`
			TargetRevision string `yaml:"targetRevision"`
		} `yaml:"source"`
	} `yaml:"spec"`
}

func decode(t *testing.T, files []File) []doc {
	t.Helper()
	var docs []doc
	for _, f := range files {
		dec := yaml.NewDecoder(bytes.NewReader(f.Content))
		for {
			var d doc
			if err := dec.Decode(&d); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", f.Path, err)
			}
			docs = append(docs, d)
		}
	}
	return docs
}

func TestGenerateDeterministic(t *testing.T) {
	a, sa := Generate(Options{Objects: 3000, Seed: 7})
	b, sb := Generate(Options{Objects: 3000, Seed: 7})
	c, _ := Generate(Options{Objects: 3000, Seed: 8})
	if sa != sb || len(a) != len(b) {
		t.Fatalf("same seed, different estates: %+v %+v", sa, sb)
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Content, b[i].Content) {
			t.Fatalf("same seed, file %s differs", a[i].Path)
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = bytes.Equal(a[i].Content, c[i].Content)
	}
	if same {
		t.Error("different seeds, same estate")
	}
}

// Stats counts what the files hold, and the estate is spread over many
// files and directories.
func TestGenerateStats(t *testing.T) {
	for _, n := range []int{200, 1000, 10000, 50000} {
		files, st := Generate(Options{Objects: n, Seed: 1})
		if st.Objects < n || st.Objects > n+20 {
			t.Errorf("%d: Stats.Objects %d", n, st.Objects)
		}
		if st.Applications+st.Stages+st.ApplicationSetObjects+st.PromotionTasks != st.Objects {
			t.Errorf("%d: kinds do not add up: %+v", n, st)
		}
		size, dirs := 0, map[string]bool{}
		for _, f := range files {
			size += len(f.Content)
			dirs[filepath.Dir(f.Path)] = true
		}
		if st.Files != len(files) || st.Bytes != size {
			t.Errorf("%d: %d files of %d bytes, stats %+v", n, len(files), size, st)
		}
		if want := (st.Objects + 24) / 25; len(files) != want {
			t.Errorf("%d: %d files, want %d", n, len(files), want)
		}
		if n >= 10000 && len(dirs) < 5 {
			t.Errorf("%d: only %d directories", n, len(dirs))
		}
		if n > 1000 { // decoding is slow under -race; TestTeamsNeverShareABranch decodes 10k
			continue
		}
		docs := decode(t, files)
		kinds := map[string]int{}
		for _, d := range docs {
			kinds[d.Kind]++
		}
		if len(docs) != st.Objects || kinds["Application"] != st.Applications || kinds["Stage"] != st.Stages ||
			kinds["ApplicationSet"] != st.ApplicationSetObjects || kinds["PromotionTask"] != st.PromotionTasks {
			t.Errorf("%d: %d documents, kinds %v, stats %+v", n, len(docs), kinds, st)
		}
	}
}

// However large the estate, no two teams' Applications track the same branch
// of the same repository: findings stay per team, as Stats.Findings says.
func TestTeamsNeverShareABranch(t *testing.T) {
	race.Sequential(t)
	files, st := Generate(Options{Objects: 10000, Seed: 1})
	owner := map[string]string{}
	repos := map[string]map[string]bool{}
	for _, d := range decode(t, files) {
		if d.Kind != "Application" {
			continue
		}
		team := d.Metadata.Name[:strings.LastIndex(d.Metadata.Name, "-")]
		key := d.Spec.Source.RepoURL + "@" + d.Spec.Source.TargetRevision
		if o, ok := owner[key]; ok && o != team {
			t.Fatalf("%s tracked by %s and %s", key, o, team)
		}
		owner[key] = team
		if repos[d.Spec.Source.RepoURL] == nil {
			repos[d.Spec.Source.RepoURL] = map[string]bool{}
		}
		repos[d.Spec.Source.RepoURL][team] = true
	}
	shared := 0
	for _, teams := range repos {
		if len(teams) > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no repository is shared by several teams")
	}
	if st.Findings()["shared-branch-contradiction"] == 0 {
		t.Errorf("no contradictions: %+v", st)
	}
}

func TestWrite(t *testing.T) {
	files, _ := Generate(Options{Objects: 300, Seed: 1, PerFile: 10})
	dir := t.TempDir()
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || !bytes.Equal(got, f.Content) {
			t.Fatalf("%s: %v", f.Path, err)
		}
	}
}
