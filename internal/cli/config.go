package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/output"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/suggest"
)

// selectionFlags choose the rules a run reports and their severities.
type selectionFlags struct {
	rules     []string
	skipRules []string
	severity  []string
}

func (s *selectionFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&s.rules, "rule", nil, "run only this rule (an id of flipflop rules; repeatable or comma-separated; also rules: in "+DefaultWaiversFile+")")
	fs.StringSliceVar(&s.skipRules, "skip-rule", nil, "do not run this rule (repeatable or comma-separated; wins over --rule; also skipRules: in "+DefaultWaiversFile+")")
	fs.StringSliceVar(&s.severity, "severity", nil, "report a rule's findings at another severity, RULE=LEVEL with LEVEL error, warning or info (repeatable or comma-separated; counts for --fail-on; also severity: in "+DefaultWaiversFile+")")
}

// apply checks the rule ids and levels the flags name against the bundle's
// rules, and sets them on s.
func (s *selectionFlags) apply(settings *evaluator.Settings) error {
	rules, err := evaluator.BundleRules()
	if err != nil {
		return err
	}
	ids := evaluator.RuleIDs(rules, func(evaluator.Rule) bool { return true })
	known := func(flag, id string) error {
		if slices.Contains(ids, id) {
			return nil
		}
		return usagef("%s: unknown rule %s%s ('flipflop rules' lists them)", flag, safetext.Quote(safetext.Cut(id, 64)), suggest.DidYouMean(id, ids))
	}
	for _, id := range s.rules {
		if err := known("--rule", id); err != nil {
			return err
		}
	}
	for _, id := range s.skipRules {
		if err := known("--skip-rule", id); err != nil {
			return err
		}
	}
	settings.Rules, settings.SkipRules = s.rules, s.skipRules
	for _, kv := range s.severity {
		id, level, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("--severity: %s is not RULE=LEVEL (shared-write-branch=error)", safetext.Quote(safetext.Cut(kv, 64)))
		}
		if err := known("--severity", id); err != nil {
			return err
		}
		if evaluator.SeverityRank(level) == 0 {
			return usagef("--severity: unknown level %s for %s (want error, warning or info)%s", safetext.Quote(safetext.Cut(level, 64)), id, suggest.DidYouMean(level, severityLevels))
		}
		if settings.Severity == nil {
			settings.Severity = map[string]string{}
		}
		settings.Severity[id] = level
	}
	return nil
}

var severityLevels = []string{evaluator.SeverityError, evaluator.SeverityWarning, evaluator.SeverityInfo}

// configure reads the configuration file (--waivers FILE, or .flipflop.yaml in
// the working directory unless --no-waivers) once, and gives every flag it
// names and the command line does not its value. Problems with single keys
// become input errors (exit 2) and the rest of the file is used; a file that
// cannot be read at all is an input error too, unless named with --waivers
// (a usage error).
func (in *inputFlags) configure() error {
	if in.configured {
		return nil
	}
	in.configured = true
	file, found := in.waiversFile, false
	if file == "" && !in.noWaivers {
		if _, err := os.Lstat(DefaultWaiversFile); err == nil {
			file, found = DefaultWaiversFile, true
		}
	}
	if file == "" {
		return nil
	}
	l := &loader.Loader{MaxFileSize: in.maxFileSize, FollowSymlinks: in.followSymlinks}
	var c *loader.Config
	var err error
	if found {
		// Found, not named: confined to the working directory as the files
		// of a directory walk are to theirs.
		c, err = l.ReadConfigIn(".", file)
	} else {
		c, err = l.ReadConfig(file)
	}
	if err != nil {
		if !found {
			return usagef("--waivers: %v", err)
		}
		in.configErrors = append(in.configErrors, loadErrorOf(file, err, "the configuration file is not read"))
		return nil
	}
	in.config = c
	in.configErrors = append(in.configErrors, c.Errors...)
	for _, s := range c.Settings {
		in.applySetting(file, s)
	}
	return nil
}

// loadErrorOf is err as an input error of file, with what follows from it.
func loadErrorOf(file string, err error, consequence string) evaluator.LoadError {
	if le, ok := err.(*evaluator.LoadError); ok {
		e := *le
		e.Message += "; " + consequence
		return e
	}
	return evaluator.LoadError{Path: file, Message: err.Error() + "; " + consequence}
}

// configChoices are the values the configuration keys with a fixed set of
// them accept.
func configChoices(key string) []string {
	switch key {
	case "failOn":
		return failLevels
	case "color":
		return output.ColorModes()
	case "read":
		return readModes
	case "progress":
		return progressModes
	}
	return nil
}

// applySetting gives the flag of s its value from the file, unless the flag
// was given on the command line or the command has no such flag; a value the
// flag would refuse is an input error at its line, and the flag keeps its
// default.
func (in *inputFlags) applySetting(file string, s loader.Setting) {
	f := in.fs.Lookup(s.Key.Flag)
	if f == nil || f.Changed {
		return
	}
	bad := func(line int, format string, args ...any) {
		in.configErrors = append(in.configErrors, evaluator.LoadError{Path: file, Line: line, Message: s.Key.Name + " is not used: " + fmt.Sprintf(format, args...)})
	}
	values := s.List
	lines := s.Lines
	switch s.Key.Kind {
	case loader.KindString, loader.KindBool, loader.KindInt:
		values, lines = []string{s.Value}, []int{s.Line}
	case loader.KindMap:
		values, lines = nil, nil
		for _, e := range s.Map {
			values, lines = append(values, e.Key+"="+e.Value), append(lines, e.Line)
		}
	}
	var ids []string
	if s.Key.Name == "rules" || s.Key.Name == "skipRules" || s.Key.Name == "severity" {
		rules, err := evaluator.BundleRules()
		if err != nil {
			bad(s.Line, "%v", err)
			return
		}
		ids = evaluator.RuleIDs(rules, func(evaluator.Rule) bool { return true })
	}
	for i, v := range values {
		line := lines[i]
		if choices := configChoices(s.Key.Name); choices != nil && !slices.Contains(choices, v) {
			bad(line, "%s is not one of %s%s", quoted(v), joinOr(choices), suggest.DidYouMean(v, choices))
			return
		}
		switch s.Key.Name {
		case "rules", "skipRules":
			if !slices.Contains(ids, v) {
				bad(line, "unknown rule %s%s ('flipflop rules' lists them)", quoted(v), suggest.DidYouMean(v, ids))
				continue
			}
		case "severity":
			id, level, _ := strings.Cut(v, "=")
			if !slices.Contains(ids, id) {
				bad(line, "unknown rule %s%s ('flipflop rules' lists them)", quoted(id), suggest.DidYouMean(id, ids))
				continue
			}
			if evaluator.SeverityRank(level) == 0 {
				bad(line, "%s: %s is not one of error, warning or info%s", id, quoted(level), suggest.DidYouMean(level, severityLevels))
				continue
			}
		case "renderTimeout":
			if d, err := time.ParseDuration(v); err != nil || d <= 0 {
				bad(line, "%s is not a positive duration such as 90s or 2m", quoted(v))
				return
			}
		case "maxFileSize":
			if strings.HasPrefix(v, "-") || v == "0" {
				bad(line, "%s is not a positive number of bytes", quoted(v))
				return
			}
		case "values":
			// Relative to the file's directory, and inside it: a file a pull
			// request brings names no path outside the checkout.
			p, ok := inside(filepath.Dir(file), v)
			if !ok {
				bad(line, "%s is not a path inside %s's directory", quoted(v), file)
				continue
			}
			v = p
		}
		if err := f.Value.Set(v); err != nil {
			bad(line, "%s: %s", quoted(v), err)
			return
		}
	}
}

// inside joins a relative path p to dir, when it stays inside dir.
func inside(dir, p string) (string, bool) {
	if filepath.IsAbs(p) {
		return "", false
	}
	j := filepath.Join(dir, p)
	rel, err := filepath.Rel(dir, j)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return j, true
}

func quoted(s string) string { return safetext.Quote(safetext.Cut(s, 64)) }
