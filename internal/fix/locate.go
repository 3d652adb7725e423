package fix

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safefile"
)

// estate is the loaded objects with their files parsed for patching, and the
// model that says where everything is written: fix maps the model's
// locations (an object and a JSON pointer) to YAML nodes and edits them; it
// never works out a fact the model holds.
type estate struct {
	objs []evaluator.Object
	// read holds the files objs were read from, by their exact bytes: fix
	// reads and patches no other file, whatever a finding or the model names.
	read     map[string]bool
	m        *evaluator.Model
	readFile func(string) ([]byte, error)
	sources  map[string]*source
	errs     map[string]error
	scopes   map[string]*scope
	stages   map[string]*stage
}

func newEstate(objs []evaluator.Object, m *evaluator.Model, readFile func(string) ([]byte, error)) *estate {
	if readFile == nil {
		readFile = safefile.ReadRegular
	}
	read := map[string]bool{}
	for _, o := range objs {
		read[o.Path] = true
	}
	return &estate{
		objs: objs, m: m, readFile: readFile, read: read,
		sources: map[string]*source{}, errs: map[string]error{}, scopes: map[string]*scope{}, stages: map[string]*stage{},
	}
}

// source returns the parsed file path.
func (e *estate) source(path string) (*source, error) {
	if s, ok := e.sources[path]; ok {
		return s, nil
	}
	if err, ok := e.errs[path]; ok {
		return nil, err
	}
	var s *source
	var err error
	switch {
	case path == "<stdin>" || path == "cluster" || path == "":
		err = fmt.Errorf("objects read from %s cannot be patched", cmpOr(path, "an unnamed input"))
	case !e.read[path]:
		err = fmt.Errorf("%s is not a file the objects were read from: fix patches only those", path)
	default:
		var data []byte
		data, err = e.readFile(filepath.FromSlash(path))
		if err == nil {
			s, err = parseSource(path, data)
		}
	}
	if err != nil {
		e.errs[path] = err
		return nil, err
	}
	e.sources[path] = s
	return s, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// object returns the mapping of the object ref names, in its file; an object
// a Helm chart or kustomization rendered has no mapping to edit.
func (e *estate) object(ref evaluator.Resource) (*source, *yaml.Node, error) {
	if ref.RenderedBy != "" {
		return nil, nil, fmt.Errorf("%s: %s %s/%s was rendered by %s: change the template or kustomization by hand", ref.File, ref.Kind, ref.Namespace, ref.Name, ref.RenderedBy)
	}
	s, err := e.source(ref.File)
	if err != nil {
		return nil, nil, err
	}
	n := s.objectNode(ref.Line)
	if n == nil {
		return nil, nil, fmt.Errorf("%s:%d: %s %s/%s is no longer there (was the file changed?)", ref.File, ref.Line, ref.Kind, ref.Namespace, ref.Name)
	}
	return s, n, nil
}

// node returns the node at a model location: the object's mapping, then the
// JSON pointer walked through mappings (by key) and sequences (by index).
func (e *estate) node(loc evaluator.Location) (*source, *yaml.Node, error) {
	s, n, err := e.object(loc.Ref)
	if err != nil {
		return nil, nil, err
	}
	at := walkPointer(n, loc.Path)
	if at == nil {
		return nil, nil, fmt.Errorf("%s:%d: %s %s/%s has nothing at %s (was the file changed?)", loc.Ref.File, loc.Ref.Line, loc.Ref.Kind, loc.Ref.Namespace, loc.Ref.Name, loc.Path)
	}
	return s, at, nil
}

// walkPointer follows a JSON pointer from n; nil when it leads nowhere.
func walkPointer(n *yaml.Node, pointer string) *yaml.Node {
	if pointer == "" {
		return n
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil
	}
	for _, seg := range strings.Split(pointer[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch {
		case n == nil:
			return nil
		case n.Kind == yaml.MappingNode:
			n = lookup(n, seg)
		case n.Kind == yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

// splitKey splits "namespace/name".
func splitKey(k string) (string, string) {
	ns, name, _ := strings.Cut(k, "/")
	return ns, name
}

// scope is a list of promotion steps written in one place: a Stage's
// promotionTemplate, or a PromotionTask (shared by the Stages that use it).
type scope struct {
	src   *source
	ref   evaluator.Resource
	task  bool
	steps *yaml.Node // the steps sequence
}

// step is one promotion step of a Stage as the model inflated it, with the
// node it is written in.
type step struct {
	m     *evaluator.Step
	alias string
	uses  string
	node  *yaml.Node
	index int // in scope.steps
	scope *scope
}

// config returns the step's config mapping as written.
func (s *step) config() *yaml.Node { return lookup(s.node, "config") }

// resolved returns a string of the step's config as the model resolved it
// (ctx and vars substituted), "" when absent or not a string.
func (s *step) resolved(key string) string {
	v, _ := s.m.Config[key].(string)
	return v
}

// stage is a Stage with its inflated steps.
type stage struct {
	key, project, name string
	steps              []*step
}

// stage returns Stage key ("project/name") with its steps, as the model has them.
func (e *estate) stage(key string) (*stage, error) {
	if st, ok := e.stages[key]; ok {
		return st, nil
	}
	ms := e.m.Stage(key)
	if ms == nil {
		return nil, fmt.Errorf("Stage %s is not among the inputs", key)
	}
	st := &stage{key: key, project: ms.Project, name: ms.Name}
	for i := range ms.Steps {
		m := &ms.Steps[i]
		if !m.TaskResolved {
			continue // a task no input defines: nothing to edit
		}
		sc, err := e.scope(m.Scope)
		if err != nil {
			return nil, err
		}
		_, n, err := e.node(m.Origin)
		if err != nil {
			return nil, err
		}
		st.steps = append(st.steps, &step{m: m, alias: m.Alias, uses: m.Uses, node: n, index: m.Index, scope: sc})
	}
	e.stages[key] = st
	return st, nil
}

// scope returns the steps list the model names, one *scope per list.
func (e *estate) scope(ms evaluator.Scope) (*scope, error) {
	k := fmt.Sprintf("%s:%d:%s", ms.Ref.File, ms.Ref.Line, ms.Path)
	if sc, ok := e.scopes[k]; ok {
		return sc, nil
	}
	src, n, err := e.node(evaluator.Location{Ref: ms.Ref, Path: ms.Path})
	if err != nil {
		return nil, err
	}
	sc := &scope{src: src, ref: ms.Ref, task: ms.Ref.Kind != "Stage", steps: n}
	e.scopes[k] = sc
	return sc, nil
}

// step returns the step with model id, in Stage key.
func (e *estate) step(key, id string) (*step, error) {
	st, err := e.stage(key)
	if err != nil {
		return nil, err
	}
	for _, s := range st.steps {
		if s.m.ID == id {
			return s, nil
		}
	}
	return nil, fmt.Errorf("Stage %s has no step %s", key, id)
}

// taskUsers lists the Stages (keys) whose promotion runs steps of the task
// written at ref, as the model inflated them.
func (e *estate) taskUsers(ref evaluator.Resource) []string {
	var users []string
	for _, s := range e.m.Stages {
		for _, st := range s.Steps {
			if st.Scope.Ref == ref {
				users = append(users, s.Key)
				break
			}
		}
	}
	return users
}

// cleanPath is a promotion path as the model compares them: no leading "./",
// no trailing "/", "" for the work directory itself. fix uses it only to join
// paths it writes.
func cleanPath(p string) string {
	p = strings.TrimRight(strings.TrimPrefix(p, "./"), "/")
	if p == "." {
		return ""
	}
	return p
}
