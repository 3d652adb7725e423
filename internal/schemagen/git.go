package schemagen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing/fstest"
)

// FromGit reads the step config schemas of Kargo release version from a Git
// repository of Kargo (gitDir, a clone or a bare mirror) at the release's tag,
// and returns them bundled (Steps) with the commit the tag names. Only the
// schema directory's JSON files are read (into memory).
func FromGit(gitDir, version string) (map[string]Schema, string, error) {
	commit, err := git(gitDir, "rev-parse", "--verify", version+"^{commit}")
	if err != nil {
		return nil, "", err
	}
	commit = strings.TrimSpace(commit)
	dir := SchemaDirOf(version)
	list, err := git(gitDir, "ls-tree", "--name-only", commit, dir+"/")
	if err != nil {
		return nil, "", err
	}
	files := fstest.MapFS{}
	for _, f := range strings.Fields(list) {
		if path.Ext(f) != ".json" {
			continue
		}
		body, err := git(gitDir, "show", commit+":"+f)
		if err != nil {
			return nil, "", err
		}
		files[path.Base(f)] = &fstest.MapFile{Data: []byte(body)}
	}
	steps, err := Steps(files)
	if err != nil {
		return nil, "", fmt.Errorf("kargo %s: %w", version, err)
	}
	return steps, commit, nil
}

// GitSource says where FromGit read a release.
func GitSource(version, commit string) string {
	return fmt.Sprintf("github.com/akuity/kargo tag %s (commit %s), %s", version, commit, SchemaDirOf(version))
}

func git(gitDir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// ModuleSource says where a release read from the Go module proxy was read.
func ModuleSource(version string) string {
	return fmt.Sprintf("github.com/akuity/kargo@%s (Go module), %s", version, SchemaDirOf(version))
}

// DefaultGitDir is the Kargo repository the generator and the drift test read
// the older releases from: $FLIPFLOP_KARGO_GIT, else a mirror beside the
// repository (../.mirror/akuity+kargo/repo, relative to its root).
func DefaultGitDir() string {
	if d := os.Getenv("FLIPFLOP_KARGO_GIT"); d != "" {
		return d
	}
	return filepath.Join("..", ".mirror", "akuity+kargo", "repo")
}
