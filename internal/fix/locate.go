package fix

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// estate is the loaded objects with their files parsed for patching.
type estate struct {
	objs     []evaluator.Object
	readFile func(string) ([]byte, error)
	sources  map[string]*source
	errs     map[string]error
}

func newEstate(objs []evaluator.Object, readFile func(string) ([]byte, error)) *estate {
	if readFile == nil {
		readFile = os.ReadFile
	}
	return &estate{objs: objs, readFile: readFile, sources: map[string]*source{}, errs: map[string]error{}}
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
	if path == "<stdin>" || path == "cluster" || path == "" {
		err = fmt.Errorf("objects read from %s cannot be patched", cmpOr(path, "an unnamed input"))
	} else {
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

// node returns the mapping of object o in its file.
func (e *estate) node(o *evaluator.Object) (*source, *yaml.Node, error) {
	if o.Rendered != "" {
		return nil, nil, fmt.Errorf("%s: %s %s/%s was rendered by %s: change the template or kustomization by hand", o.Path, o.Kind, o.Namespace, o.Name, o.Rendered)
	}
	s, err := e.source(o.Path)
	if err != nil {
		return nil, nil, err
	}
	n := s.objectNode(o.Line)
	if n == nil {
		return nil, nil, fmt.Errorf("%s:%d: %s %s/%s is no longer there (was the file changed?)", o.Path, o.Line, o.Kind, o.Namespace, o.Name)
	}
	return s, n, nil
}

// find returns the object of kind in namespace ns named name.
func (e *estate) find(kind, ns, name string) *evaluator.Object {
	for i := range e.objs {
		o := &e.objs[i]
		if o.Kind == kind && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

// at returns the object of kind read at file:line.
func (e *estate) at(kind, file string, line int) *evaluator.Object {
	for i := range e.objs {
		o := &e.objs[i]
		if o.Kind == kind && o.Path == file && o.Line == line {
			return o
		}
	}
	return nil
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
	obj   *evaluator.Object
	task  bool
	steps *yaml.Node // the steps sequence
}

// step is one promotion step of a Stage after task inflation, with the node
// it was read from.
type step struct {
	alias string
	uses  string
	node  *yaml.Node
	index int // in scope.steps
	scope *scope
	env   map[string]string // ctx.* and vars.* as far as they are plain strings
}

// config returns the step's config mapping.
func (s *step) config() *yaml.Node { return lookup(s.node, "config") }

// stage is a Stage with its inflated steps.
type stage struct {
	key, project, name string
	obj                *evaluator.Object
	src                *source
	node               *yaml.Node
	steps              []*step
	tasks              map[*evaluator.Object]bool // the tasks it uses
}

// stage reads Stage key ("project/name") and inflates its steps as Kargo does.
func (e *estate) stage(key string) (*stage, error) {
	project, name := splitKey(key)
	o := e.find("Stage", project, name)
	if o == nil {
		return nil, fmt.Errorf("Stage %s is not among the inputs", key)
	}
	src, n, err := e.node(o)
	if err != nil {
		return nil, err
	}
	st := &stage{key: key, project: project, name: name, obj: o, src: src, node: n, tasks: map[*evaluator.Object]bool{}}
	ctx := map[string]string{"ctx.stage": name, "ctx.project": project}
	base := resolveVars(ctx, nil, lookup(n, "spec"), "vars")
	base = resolveVars(ctx, base, pathOf(n, "spec", "promotionTemplate", "spec"), "vars")
	steps := pathOf(n, "spec", "promotionTemplate", "spec", "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return st, nil
	}
	inline := &scope{src: src, obj: o, steps: steps}
	for i, sn := range steps.Content {
		if sn.Kind != yaml.MappingNode {
			continue
		}
		if t := lookup(sn, "task"); t != nil {
			taskAlias := str(sn, "as")
			if taskAlias == "" {
				taskAlias = fmt.Sprintf("task-%d", i)
			}
			to := e.task(project, t)
			if to == nil {
				continue
			}
			tsrc, tn, err := e.node(to)
			if err != nil {
				return nil, err
			}
			st.tasks[to] = true
			tsteps := pathOf(tn, "spec", "steps")
			if tsteps == nil || tsteps.Kind != yaml.SequenceNode {
				continue
			}
			// Kargo's order: task defaults, Stage and template vars, the task step's vars.
			env := resolveVars(ctx, nil, lookup(tn, "spec"), "vars")
			for k, v := range base {
				env[k] = v
			}
			env = resolveVars(ctx, env, sn, "vars")
			sc := &scope{src: tsrc, obj: to, task: true, steps: tsteps}
			for j, tsn := range tsteps.Content {
				if tsn.Kind != yaml.MappingNode {
					continue
				}
				alias := str(tsn, "as")
				if alias == "" {
					alias = fmt.Sprintf("step-%d", j)
				}
				st.steps = append(st.steps, &step{
					alias: taskAlias + "::" + alias, uses: str(tsn, "uses"), node: tsn, index: j, scope: sc,
					env: resolveVars(ctx, env, tsn, "vars"),
				})
			}
			continue
		}
		alias := str(sn, "as")
		if alias == "" {
			alias = fmt.Sprintf("step-%d", i)
		}
		st.steps = append(st.steps, &step{alias: alias, uses: str(sn, "uses"), node: sn, index: i, scope: inline, env: resolveVars(ctx, base, sn, "vars")})
	}
	return st, nil
}

// task returns the PromotionTask (in the Stage's project) or
// ClusterPromotionTask a task step names.
func (e *estate) task(project string, t *yaml.Node) *evaluator.Object {
	name := str(t, "name")
	if str(t, "kind") == "ClusterPromotionTask" {
		return e.find("ClusterPromotionTask", "", name)
	}
	return e.find("PromotionTask", project, name)
}

// taskUsers lists the Stages (keys) whose promotion uses task object to.
func (e *estate) taskUsers(to *evaluator.Object) []string {
	var users []string
	for i := range e.objs {
		o := &e.objs[i]
		if o.Kind != "Stage" {
			continue
		}
		_, n, err := e.node(o)
		if err != nil {
			continue
		}
		steps := pathOf(n, "spec", "promotionTemplate", "spec", "steps")
		if steps == nil {
			continue
		}
		for _, sn := range steps.Content {
			if t := lookup(sn, "task"); t != nil && e.task(o.Namespace, t) == to {
				users = append(users, o.Namespace+"/"+o.Name)
				break
			}
		}
	}
	return users
}

// resolveVars returns env extended by the vars list under m[key]: each var's
// value with ctx and earlier vars substituted (values that stay expressions are
// kept as written).
func resolveVars(ctx, env map[string]string, m *yaml.Node, k string) map[string]string {
	out := map[string]string{}
	for k, v := range ctx {
		out[k] = v
	}
	for k, v := range env {
		out[k] = v
	}
	vars := lookup(m, k)
	if vars == nil || vars.Kind != yaml.SequenceNode {
		return out
	}
	for _, v := range vars.Content {
		name := str(v, "name")
		if name == "" {
			continue
		}
		if val := lookup(v, "value"); val != nil && val.Kind == yaml.ScalarNode {
			out["vars."+name] = subst(val.Value, out)
		}
	}
	return out
}

var exprRE = regexp.MustCompile(`\$\{\{\s*(ctx\.(?:stage|project)|vars\.[A-Za-z_][A-Za-z0-9_]*|vars\[['"][^'"]+['"]\])\s*\}\}`)

// subst replaces ${{ ctx.stage }}, ${{ ctx.project }} and ${{ vars.x }} in s.
func subst(s string, env map[string]string) string {
	return exprRE.ReplaceAllStringFunc(s, func(m string) string {
		ref := exprRE.FindStringSubmatch(m)[1]
		if strings.HasPrefix(ref, "vars[") {
			ref = "vars." + strings.Trim(ref[len("vars["):len(ref)-1], `'"`)
		}
		if v, ok := env[ref]; ok {
			return v
		}
		return m
	})
}

// cleanPath is a promotion path as the model compares them: no leading "./",
// no trailing "/", "" for the work directory itself.
func cleanPath(p string) string {
	p = strings.TrimRight(strings.TrimPrefix(p, "./"), "/")
	if p == "." {
		return ""
	}
	return p
}

// under reports whether path p lies in directory root (both cleaned).
func under(p, root string) bool {
	return root == "" || p == root || strings.HasPrefix(p, root+"/")
}
