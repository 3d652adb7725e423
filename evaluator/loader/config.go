package loader

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/suggest"
)

// ValueKind is the type of a configuration key's value.
type ValueKind int

// The kinds of values a configuration file holds.
const (
	// KindString is a string (numbers and booleans are read as the text written).
	KindString ValueKind = iota
	// KindList is a list of strings.
	KindList
	// KindMap is a mapping of strings to strings.
	KindMap
	// KindBool is true or false.
	KindBool
	// KindInt is a whole number.
	KindInt
)

func (k ValueKind) String() string {
	switch k {
	case KindList:
		return "a list of strings"
	case KindMap:
		return "a mapping of strings"
	case KindBool:
		return "true or false"
	case KindInt:
		return "a whole number"
	}
	return "a string"
}

// ConfigKey is a key a configuration file may hold.
type ConfigKey struct {
	// Name is the key as written (camelCase).
	Name string
	// Kind is the type of its value.
	Kind ValueKind
	// Flag is the command-line flag the key gives a default to ("" for
	// waivers and exclude, which are read here).
	Flag string
	// Help says what it is, for the documentation.
	Help string
}

// ConfigKeys lists the keys of a configuration file: waivers and exclude
// patterns (read by ReadConfig), the Kargo version, and the defaults of
// command-line flags (a flag given on the command line wins). Flags that
// decide what the configuration file may read, what is written where, and
// how a cluster is reached are command-line only: --waivers, --no-waivers,
// --no-ignore-file, --follow-symlinks, --repo-root, --out, --summary,
// --output, -n/--namespace (which with --cluster also selects what is read)
// and the other --cluster flags.
var ConfigKeys = []ConfigKey{
	{Name: "waivers", Kind: KindList, Help: "findings to live with: [{rule, resources, reason, expires}] (docs/waivers.md)"},
	{Name: "exclude", Kind: KindList, Help: "paths not to read, .gitignore patterns relative to the file's directory"},
	{Name: "kargoVersion", Kind: KindString, Flag: "kargo-version", Help: "the Kargo release the estate runs on"},
	{Name: "rules", Kind: KindList, Flag: "rule", Help: "run only these rules (ids of flipflop rules)"},
	{Name: "skipRules", Kind: KindList, Flag: "skip-rule", Help: "do not run these rules"},
	{Name: "severity", Kind: KindMap, Flag: "severity", Help: "report a rule's findings at another severity: {rule-id: error|warning|info}"},
	{Name: "failOn", Kind: KindString, Flag: "fail-on", Help: "exit 1 on findings at or above this severity: error, warning, info or never"},
	{Name: "defaultBranch", Kind: KindString, Flag: "default-branch", Help: "the branch HEAD stands for"},
	{Name: "argocdNamespace", Kind: KindList, Flag: "argocd-namespace", Help: "Argo CD's namespaces; the first is where Applications live when a manifest omits it"},
	{Name: "read", Kind: KindString, Flag: "read", Help: "how directories are read: auto or plain"},
	{Name: "values", Kind: KindList, Flag: "values", Help: "Helm values files for every chart rendered, relative to the file's directory and inside it"},
	{Name: "set", Kind: KindList, Flag: "set", Help: "Helm values key=value for every chart rendered"},
	{Name: "setString", Kind: KindList, Flag: "set-string", Help: "Helm string values key=value for every chart rendered"},
	{Name: "releaseName", Kind: KindString, Flag: "release-name", Help: "the Helm release name charts are rendered with"},
	{Name: "releaseNamespace", Kind: KindString, Flag: "release-namespace", Help: "the Helm release namespace charts are rendered with"},
	{Name: "renderTimeout", Kind: KindString, Flag: "render-timeout", Help: "time for all rendering in the run (1m30s)"},
	{Name: "maxFileSize", Kind: KindInt, Flag: "max-file-size", Help: "largest input file read, in bytes"},
	{Name: "allowEmpty", Kind: KindBool, Flag: "allow-empty", Help: "succeed when the inputs hold no Stage and no Application"},
	{Name: "color", Kind: KindString, Flag: "color", Help: "colour the text output: auto, always or never"},
	{Name: "progress", Kind: KindString, Flag: "progress", Help: "say what a long run does on standard error: auto, always or never"},
}

// configKeyNames lists the names of ConfigKeys, in order.
func configKeyNames() []string {
	names := make([]string, len(ConfigKeys))
	for i, k := range ConfigKeys {
		names[i] = k.Name
	}
	return names
}

// waiverKeys are the keys of a waiver.
var waiverKeys = []string{"rule", "resources", "reason", "expires"}

// Setting is the value a configuration file gives a flag's key.
type Setting struct {
	Key ConfigKey
	// Line is where the value is written.
	Line int
	// Value is the string of a KindString, KindBool or KindInt key, as written.
	Value string
	// List is the value of a KindList key; Lines the line of each item.
	List  []string
	Lines []int
	// Map is the value of a KindMap key, in the file's order, with the line
	// of each entry.
	Map []MapEntry
}

// MapEntry is one entry of a KindMap setting.
type MapEntry struct {
	Key, Value string
	Line       int
}

// configReader decodes a configuration file's nodes, collecting every
// problem (each names the line and the key) instead of stopping at the first.
type configReader struct {
	path   string
	errs   []evaluator.LoadError
	budget int // nodes left to visit: aliases cannot make a small file costly
}

func (r *configReader) errorf(line int, format string, args ...any) {
	r.errs = append(r.errs, evaluator.LoadError{Path: r.path, Line: line, Message: fmt.Sprintf(format, args...)})
}

// node resolves an alias and counts the visit; nil when the budget is spent.
func (r *configReader) node(n *yaml.Node) *yaml.Node {
	if r.budget <= 0 {
		return nil
	}
	r.budget--
	return resolveAlias(n)
}

// shown is a key or value of the file quoted for a message: escaped and cut
// to 64 characters (the file may come from a pull request).
func shown(s string) string { return safetext.Quote(safetext.Cut(s, 64)) }

// what names a node's type in the file's words.
func what(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if t, ok := yamlTags[strings.TrimPrefix(n.ShortTag(), "!!")]; ok {
			return t
		}
	}
	return "a value"
}

var yamlTags = map[string]string{
	"str": "a string", "int": "a number", "float": "a number", "bool": "a boolean",
	"null": "null", "timestamp": "a date", "binary": "binary data",
}

// mapping returns the key and value nodes of a mapping, reporting keys given
// twice and keys that are not strings (the first of a repeated key wins, as
// a later one is reported).
func (r *configReader) mapping(n *yaml.Node, where string) (keys []string, vals []*yaml.Node, lines []int) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := r.node(n.Content[i]), r.node(n.Content[i+1])
		if k == nil || v == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			r.errorf(k.Line, "%s where a key of %s belongs", what(k), where)
			continue
		}
		if first, ok := seen[k.Value]; ok {
			r.errorf(k.Line, "%s is given twice in %s (first on line %d): the second is not read", shown(k.Value), where, first)
			continue
		}
		seen[k.Value] = k.Line
		keys, vals, lines = append(keys, k.Value), append(vals, v), append(lines, k.Line)
	}
	return
}

// unknownKey reports a key that is not one of allowed, with the nearest.
func (r *configReader) unknownKey(line int, key, where string, allowed []string) {
	r.errorf(line, "unknown key %s in %s%s (keys: %s)", shown(key), where, suggest.DidYouMean(key, allowed), strings.Join(allowed, ", "))
}

// scalar reads a string value; ok false (reported) for anything else.
func (r *configReader) scalar(v *yaml.Node, key string) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		r.errorf(v.Line, "%s: %s where a string belongs", key, what(v))
		return "", false
	}
	return v.Value, true
}

// list reads a list of strings; ok false (reported) when it is none.
func (r *configReader) list(v *yaml.Node, key string) (items []string, lines []int, ok bool) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil, nil, true // "key:" with nothing under it: an empty list
	}
	if v.Kind != yaml.SequenceNode {
		hint := ""
		if v.Kind == yaml.ScalarNode {
			hint = fmt.Sprintf(" (write %s: [%s])", key, shown(v.Value))
		}
		r.errorf(v.Line, "%s: %s where a list of strings belongs%s", key, what(v), hint)
		return nil, nil, false
	}
	ok = true
	for _, c := range v.Content {
		item := r.node(c)
		if item == nil {
			return nil, nil, false
		}
		if item.Kind != yaml.ScalarNode || item.ShortTag() == "!!null" {
			r.errorf(item.Line, "%s: %s where a string belongs in the list", key, what(item))
			ok = false
			continue
		}
		items, lines = append(items, item.Value), append(lines, item.Line)
	}
	return items, lines, ok
}

// readConfigNode reads the mapping at the root of a configuration file.
func (r *configReader) readConfigNode(root *yaml.Node, c *Config) {
	keys, vals, lines := r.mapping(root, "the configuration file")
	for i, key := range keys {
		v := vals[i]
		k := slices.IndexFunc(ConfigKeys, func(ck ConfigKey) bool { return ck.Name == key })
		if k < 0 {
			r.unknownKey(lines[i], key, "the configuration file", configKeyNames())
			continue
		}
		ck := ConfigKeys[k]
		switch ck.Name {
		case "waivers":
			r.waivers(v, c)
			continue
		case "exclude":
			items, itemLines, _ := r.list(v, key)
			for j, p := range items {
				c.Exclude = append(c.Exclude, Exclude{Pattern: p, Dir: filepath.Dir(r.path), Source: fmt.Sprintf("%s:%d", r.path, itemLines[j])})
			}
			continue
		case "kargoVersion":
			if s, ok := r.scalar(v, key); ok && s != "" {
				c.KargoVersion, c.KargoVersionSource = s, fmt.Sprintf("%s:%d", r.path, v.Line)
			}
			continue
		}
		s := Setting{Key: ck, Line: v.Line}
		switch ck.Kind {
		case KindString:
			var ok bool
			if s.Value, ok = r.scalar(v, key); !ok {
				continue
			}
		case KindBool:
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
				r.errorf(v.Line, "%s: %s where true or false belongs", key, what(v))
				continue
			}
			b, _ := strconv.ParseBool(strings.ToLower(v.Value))
			s.Value = strconv.FormatBool(b)
		case KindInt:
			n, err := strconv.ParseInt(v.Value, 0, 64)
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || err != nil {
				r.errorf(v.Line, "%s: %s where a whole number belongs", key, what(v))
				continue
			}
			s.Value = strconv.FormatInt(n, 10)
		case KindList:
			var ok bool
			if s.List, s.Lines, ok = r.list(v, key); !ok {
				continue
			}
		case KindMap:
			if v.Kind != yaml.MappingNode {
				r.errorf(v.Line, "%s: %s where a mapping belongs (%s)", key, what(v), ck.Help)
				continue
			}
			mkeys, mvals, mlines := r.mapping(v, key)
			for j, mk := range mkeys {
				if val, ok := r.scalar(mvals[j], key+": "+mk); ok {
					s.Map = append(s.Map, MapEntry{Key: mk, Value: val, Line: mlines[j]})
				}
			}
		}
		c.Settings = append(c.Settings, s)
	}
}

// waivers reads the waivers list: each waiver whose keys are all known and
// of the right type is kept; the others are reported and left out.
func (r *configReader) waivers(v *yaml.Node, c *Config) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return
	}
	if v.Kind != yaml.SequenceNode {
		r.errorf(v.Line, "waivers: %s where a list of waivers belongs ([{rule, resources, reason, expires}])", what(v))
		return
	}
	for i, item := range v.Content {
		n := r.node(item)
		if n == nil {
			return
		}
		where := fmt.Sprintf("waiver %d", i+1)
		if n.Kind != yaml.MappingNode {
			r.errorf(n.Line, "%s: %s where a waiver belongs (a mapping with keys %s)", where, what(n), strings.Join(waiverKeys, ", "))
			continue
		}
		w := evaluator.Waiver{File: r.path, Line: n.Line}
		good := true
		keys, vals, lines := r.mapping(n, where)
		for j, key := range keys {
			val := vals[j]
			switch key {
			case "rule":
				w.Rule, good = r.waiverString(val, where, key, good)
			case "reason":
				w.Reason, good = r.waiverString(val, where, key, good)
			case "expires":
				w.Expires, good = r.waiverString(val, where, key, good)
				if problem := expiryProblem(w.Expires); problem != "" {
					// Kept: the policies find it invalid, so it waives nothing.
					r.errorf(val.Line, "%s: expires: %s; the waiver waives nothing", where, problem)
				}
			case "resources":
				items, _, ok := r.list(val, where+": resources")
				w.Resources, good = items, good && ok
			default:
				r.unknownKey(lines[j], key, "a waiver", waiverKeys)
				good = false
			}
		}
		if !good {
			r.errorf(n.Line, "%s is not read: it waives nothing", where)
			continue
		}
		c.Waivers = append(c.Waivers, w)
	}
}

func (r *configReader) waiverString(v *yaml.Node, where, key string, good bool) (string, bool) {
	s, ok := r.scalar(v, where+": "+key)
	return s, good && ok
}
