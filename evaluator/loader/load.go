package loader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// DefaultMaxFileSize is the largest file (or standard input) a Loader reads
// when Loader.MaxFileSize is 0.
const DefaultMaxFileSize = 32 << 20

// stdinPath is the Path given to objects and errors read from standard input.
const stdinPath = "<stdin>"

// Loader reads Kubernetes objects from files, directories and standard input.
type Loader struct {
	// MaxFileSize is in bytes; 0 means DefaultMaxFileSize. Larger files are
	// reported as an evaluator.LoadError and not read.
	MaxFileSize int64
	// Stdin is used for the path "-"; nil means os.Stdin.
	Stdin io.Reader
	// FollowSymlinks reads files that symbolic links found in a directory walk
	// point to outside the directory given; by default such links are reported
	// as errors and not read. Links to directories are never followed.
	FollowSymlinks bool
	// Exclude lists patterns of paths not to read (see Exclude); they win over
	// the ignore files' patterns, and a later one over an earlier one.
	Exclude []Exclude
	// IgnoreFile names the per-directory ignore file (DefaultIgnoreFile) whose
	// patterns, in the same syntax and relative to its directory, exclude paths
	// under that directory, as .gitignore files do; "" reads none. The files of
	// the directories a walk enters are read, and those of the directories
	// between the working directory and each path given.
	IgnoreFile string
	// Renderer reads the Helm charts and kustomizations found in directories
	// (see LoadAll); nil reads every directory as plain YAML.
	Renderer Renderer
	// AllKinds keeps objects of every kind. By default an object of a kind no
	// rule reads (see evaluator.ReadKind) is dropped before it is converted, and only
	// counted (Loaded.Skipped): it costs its YAML parse and nothing more.
	AllKinds bool
	// Aliases is the run's alias-expansion budget, shared by every file read
	// (the documents a Renderer that implements DecodingRenderer renders
	// too); give the same one to ExpandGitGeneratorsWithin so that the files
	// git generators read share it. nil: a new budget for each LoadAll.
	Aliases *AliasBudget
}

func (l *Loader) maxFileSize() int64 {
	if l.MaxFileSize > 0 {
		return l.MaxFileSize
	}
	return DefaultMaxFileSize
}

// Loaded is what LoadAll read.
type Loaded struct {
	// Objects are the objects read, in the order Load documents.
	Objects []evaluator.Object
	// Errors are the inputs (files, documents) that could not be read.
	Errors []evaluator.LoadError
	// Excluded are the paths Exclude and IgnoreFile left unread.
	Excluded []evaluator.Exclusion
	// Rendered lists the directories read as Helm charts or kustomizations.
	Rendered []evaluator.RenderedRoot
	// Skipped counts the objects of kinds no rule reads that were dropped
	// unconverted (0 with AllKinds).
	Skipped int
}

// loadTask is one input to read: a file, standard input, or an error found
// while collecting inputs.
type loadTask struct {
	path  string // file system path
	shown string // path reported in Objects and LoadErrors (slash-separated)
	stdin bool
	err   *evaluator.LoadError
	mode  string // a directory to render in this mode (Renderer.Claim)
}

type loadResult struct {
	objects  []evaluator.Object
	errors   []evaluator.LoadError
	rendered *Rendered
	skipped  int
}

// Load reads every path and returns the objects in a deterministic order
// (paths in argument order, directory entries sorted by name, documents in
// file order) plus every load error; it never stops at the first error.
//
// A path is a file (read whatever its name), a directory (walked
// recursively for *.yaml, *.yml and *.json files, skipping hidden
// directories and not following symbolic links to directories) or "-" for
// Stdin, whose objects get the path "<stdin>" (standard input is read once:
// a repeated "-" is ignored). Files are read in parallel.
func (l *Loader) Load(paths []string) ([]evaluator.Object, []evaluator.LoadError) {
	r := l.LoadAll(paths)
	return r.Objects, r.Errors
}

// LoadAll is Load that also reports the paths that Exclude and IgnoreFile
// left unread (an excluded directory is reported once, not its files), and
// renders, with Loader.Renderer, the Helm charts and kustomizations it finds,
// saying which directories it rendered and how.
//
// A directory is read as an Argo CD Application that points at it reads it. A
// directory the Renderer claims is read whole by it: a chart's templates/,
// charts/ and crds/ are Helm's only, and the manifest files in a chart's or
// kustomization's own directory that no render reads are listed in
// evaluator.RenderedRoot.NotListed, not read. A plain directory below a chart
// or a kustomization is read as it stands (an Application may point at it),
// and a kustomization another one reads as a base counts in both. A file named
// kustomization.yaml or Chart.yaml given explicitly stands for its directory.
func (l *Loader) LoadAll(paths []string) Loaded {
	if l == nil {
		l = &Loader{}
	}
	rw := &renderWalk{renderer: l.Renderer}
	var tasks []loadTask
	ex, exErrs := newExcluder(l)
	for i := range exErrs {
		tasks = append(tasks, loadTask{err: &exErrs[i]})
	}
	stdinSeen := false
	for _, p := range paths {
		if p == "-" {
			if !stdinSeen {
				stdinSeen = true
				tasks = append(tasks, loadTask{shown: stdinPath, stdin: true})
			}
			continue
		}
		tasks = collectLoadTasks(tasks, p, l.FollowSymlinks, ex, rw)
	}

	if er, ok := l.Renderer.(ExcludingRenderer); ok && ex != nil {
		// Every exclusion inside the paths given is decided by now (the walk
		// enters rendered directories too): no render may read one.
		er.SetExcluded(ex.paths)
	}

	aliases := l.Aliases
	if aliases == nil {
		aliases = NewAliasBudget()
	}
	// Each task is a source of the alias budget, in task order: a file that
	// needs more than its own bytes bring waits for the tasks before it.
	// Tasks are taken in order, so every task it waits for is being read.
	first := aliases.sources(len(tasks))
	results := make([]loadResult, len(tasks))
	workers := min(runtime.GOMAXPROCS(0), len(tasks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				m := aliases.source(first + i)
				results[i] = l.run(tasks[i], m)
				m.finish()
			}
		}()
	}
	wg.Wait()

	var renders []renderResult
	for i, r := range results {
		if r.rendered != nil {
			renders = append(renders, renderResult{dir: tasks[i].path, mode: tasks[i].mode, out: *r.rendered})
		}
	}
	out := Loaded{Rendered: settleRenders(renders, rw.owned)}
	base := map[string]bool{}
	for _, r := range out.Rendered {
		base[r.Path] = r.BaseOf != ""
	}
	var readings []reading
	for i, r := range results {
		if r.rendered != nil {
			rank := readingOutermost
			if base[r.rendered.Root.Path] {
				rank = readingBase
			}
			for _, o := range r.rendered.Objects {
				readings = append(readings, reading{o, rank, ""})
			}
			out.Errors = append(out.Errors, r.rendered.Errors...)
			out.Skipped += r.rendered.Skipped
			continue
		}
		for _, o := range r.objects {
			readings = append(readings, reading{o, readingPlain, tasks[i].path})
		}
		out.Errors = append(out.Errors, r.errors...)
		out.Skipped += r.skipped
	}
	out.Objects = oneReadingEach(readings)
	if ex != nil {
		out.Excluded = ex.excluded
	}
	return out
}

// run reads and decodes one task, its aliases expanded within m.
func (l *Loader) run(t loadTask, m *aliasMeter) loadResult {
	if t.err != nil {
		return loadResult{errors: []evaluator.LoadError{*t.err}}
	}
	if t.mode != "" {
		var out Rendered
		if dr, ok := l.Renderer.(DecodingRenderer); ok {
			out = dr.RenderDecoding(t.path, t.shown, t.mode, func(path string, data []byte, filter bool) ([]evaluator.Object, []evaluator.LoadError, int) {
				return decodeFile(path, data, filter, m)
			})
		} else {
			out = l.Renderer.Render(t.path, t.shown, t.mode)
		}
		return loadResult{rendered: &out}
	}
	var data []byte
	var err *evaluator.LoadError
	if t.stdin {
		data, err = l.readStdin()
	} else {
		data, err = readFileLimited(t.path, t.shown, l.maxFileSize())
	}
	if err != nil {
		return loadResult{errors: []evaluator.LoadError{*err}}
	}
	objs, errs, skipped := decodeFile(t.shown, data, !l.AllKinds, m)
	return loadResult{objects: objs, errors: errs, skipped: skipped}
}

func (l *Loader) readStdin() ([]byte, *evaluator.LoadError) {
	r := l.Stdin
	if r == nil {
		r = os.Stdin
	}
	limit := l.maxFileSize()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, &evaluator.LoadError{Path: stdinPath, Message: err.Error()}
	}
	if int64(len(data)) > limit {
		return nil, &evaluator.LoadError{Path: stdinPath, Message: fmt.Sprintf("input is larger than the limit of %d bytes", limit)}
	}
	return data, nil
}

// collectLoadTasks appends the tasks for one path given by the user.
func collectLoadTasks(tasks []loadTask, p string, follow bool, ex *excluder, rw *renderWalk) []loadTask {
	shown := filepath.ToSlash(p)
	fi, err := os.Stat(p) // follows a symbolic link given explicitly
	if err != nil {
		return append(tasks, loadTask{err: &evaluator.LoadError{Path: shown, Message: fsErrorMessage(err)}})
	}
	if ex != nil {
		excluded, errs := ex.root(p, fi.IsDir())
		tasks = append(tasks, errs...)
		if excluded {
			return tasks
		}
	}
	switch {
	case fi.IsDir():
		return walkLoadTasks(tasks, p, follow, ex, rw)
	case fi.Mode().IsRegular() && rw.renderer != nil && isRenderFile(p):
		// A kustomization.yaml or Chart.yaml stands for its directory, which
		// is walked like a directory given (its exclusions decided).
		dir := filepath.Dir(p)
		if mode := rw.renderer.Claim(dir); mode != "" {
			tasks = append(tasks, decideExclusions(dir, ex)...)
			return append(tasks, loadTask{path: filepath.Clean(dir), shown: filepath.ToSlash(filepath.Clean(dir)), mode: mode})
		}
		return append(tasks, loadTask{path: p, shown: shown})
	case fi.Mode().IsRegular():
		return append(tasks, loadTask{path: p, shown: shown})
	default:
		return append(tasks, loadTask{err: &evaluator.LoadError{Path: shown, Message: notRegularMessage(fi.Mode())}})
	}
}

// walkLoadTasks appends the tasks for the manifest files under root, and for
// the directories rw's renderer claims.
func walkLoadTasks(tasks []loadTask, root string, follow bool, ex *excluder, rw *renderWalk) []loadTask {
	walkRoot := root
	realRoot, rootErr := filepath.EvalSymlinks(root)
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// WalkDir does not follow a symbolic link given as its root; a
		// trailing separator makes the system resolve it.
		walkRoot = root + string(filepath.Separator)
	}
	fail := func(path string, err error) {
		tasks = append(tasks, loadTask{err: &evaluator.LoadError{Path: filepath.ToSlash(path), Message: fsErrorMessage(err)}})
	}
	// WalkDir visits entries in lexical order and does not follow symbolic
	// links to directories, so link loops cannot make it run forever.
	_ = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// Unreadable directory, or an entry removed during the walk.
			fail(path, err)
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != walkRoot && strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			if ex != nil {
				if path != walkRoot && ex.skip(path, true) {
					return filepath.SkipDir // not read at all
				}
				tasks = append(tasks, ex.enter(path)...)
			}
			if mode := rw.enter(path); mode != "" {
				dir := filepath.Clean(path)
				tasks = append(tasks, loadTask{path: dir, shown: filepath.ToSlash(dir), mode: mode})
			}
			return nil
		}
		if dir, mode := rw.owner(path); dir != "" {
			// Under a rendered directory. Every file is decided, whatever
			// its name (a template, a generator's data file), so that no
			// render reads an excluded one.
			if ex != nil && ex.skip(path, false) {
				return nil
			}
			if mode == evaluator.ModeHelm && helmReads(dir, path) {
				return nil // the chart's own templates, subcharts and CRDs
			}
			if filepath.Dir(filepath.Clean(path)) == dir {
				// In the rendered directory itself: an Application that
				// points at it builds the kustomization or renders the
				// chart, which is all that reads its files.
				if mode == evaluator.ModeKustomize && isManifestName(name) {
					rw.own(dir, path)
				}
				if mode == evaluator.ModeHelm && isManifestName(name) && !chartData(name) {
					rw.own(dir, path) // a manifest Helm does not template
				}
				return nil
			}
			// In a plain directory below a chart or a kustomization: an
			// Application that points at it reads its files as they stand,
			// whatever sits above it and whether or not a kustomization
			// also reads them, so they are read here too.
		}
		if !isManifestName(name) {
			return nil
		}
		if ex != nil && ex.skip(path, false) {
			return nil
		}
		shown := filepath.ToSlash(path)
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := os.Stat(path)
			if err != nil {
				fail(path, err) // dangling link or link loop
				return nil
			}
			if fi.IsDir() {
				return nil // links to directories are not followed
			}
			if !follow && !insideRoot(path, realRoot, rootErr) {
				tasks = append(tasks, loadTask{err: &evaluator.LoadError{Path: shown, Message: "symbolic link to a file outside " + filepath.ToSlash(root) + " not followed (use --follow-symlinks to read it)"}})
				return nil
			}
			mode = fi.Mode()
		}
		if !mode.IsRegular() {
			tasks = append(tasks, loadTask{err: &evaluator.LoadError{Path: shown, Message: notRegularMessage(mode)}})
			return nil
		}
		tasks = append(tasks, loadTask{path: path, shown: shown})
		return nil
	})
	return tasks
}

// decideExclusions walks a directory rendered whole (a kustomization or chart
// given by its file) only to decide, and record, what the run excludes in it,
// so that its render reads none of that; it returns the ignore files' errors.
func decideExclusions(root string, ex *excluder) []loadTask {
	if ex == nil {
		return nil
	}
	var tasks []loadTask
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // the render reports what it cannot read
		}
		if d.IsDir() {
			if path != root && ex.skip(path, true) {
				return filepath.SkipDir
			}
			tasks = append(tasks, ex.enter(path)...)
			return nil
		}
		ex.skip(path, false)
		return nil
	})
	return tasks
}

// insideRoot reports whether the link at path resolves to a file under realRoot.
func insideRoot(path, realRoot string, rootErr error) bool {
	if rootErr != nil {
		return false
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, target)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isRenderFile reports whether a file given explicitly names a directory to
// render: a kustomization file or a Chart.yaml.
func isRenderFile(p string) bool {
	base := filepath.Base(p)
	return base == "Chart.yaml" || slices.Contains(kustomizationNames, base)
}

// isManifestName reports whether a file found in a directory walk is read.
func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func notRegularMessage(mode fs.FileMode) string {
	kind := "special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "named pipe"
	case mode&fs.ModeSocket != 0:
		kind = "socket"
	case mode&fs.ModeDevice != 0:
		kind = "device"
	}
	return "not a regular file (" + kind + ")"
}

// fsErrorMessage returns err's message without the path, which the
// LoadError already names.
func fsErrorMessage(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// readFileLimited reads a regular file of at most limit bytes. The file is
// checked with Stat right before it is opened, so special files (a FIFO
// would block the open) are never opened, and again on the open file.
func readFileLimited(path, shown string, limit int64) ([]byte, *evaluator.LoadError) {
	fail := func(msg string) ([]byte, *evaluator.LoadError) {
		return nil, &evaluator.LoadError{Path: shown, Message: msg}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail(fsErrorMessage(err))
	}
	if !fi.Mode().IsRegular() {
		return fail(notRegularMessage(fi.Mode()))
	}
	if fi.Size() > limit {
		return fail(fmt.Sprintf("file is too large (%d bytes; the limit is %d bytes)", fi.Size(), limit))
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(fsErrorMessage(err))
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return fail(fsErrorMessage(err))
	}
	if !fi.Mode().IsRegular() {
		return fail(notRegularMessage(fi.Mode()))
	}
	if fi.Size() > limit {
		return fail(fmt.Sprintf("file is too large (%d bytes; the limit is %d bytes)", fi.Size(), limit))
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return fail(fsErrorMessage(err))
	}
	if int64(buf.Len()) > limit {
		return fail(fmt.Sprintf("file is too large (more than %d bytes; the limit is %d bytes)", limit, limit))
	}
	return buf.Bytes(), nil
}

// yamlDocument is one document of a multi-document file.
type yamlDocument struct {
	line int // 1-based line of the document's first line in the file
	data []byte
}

// splitYAMLDocuments splits a YAML stream on document markers and calls
// each for every document, in order: a line that is "---" or starts with
// "--- " or "---\t" starts a document (the marker line, and whatever follows
// the marker, belongs to it); a "..." line ends one. Comment, blank and
// directive lines before a "---" belong to the document it starts. Documents
// holding only such lines, or only a marker, are dropped without being
// decoded, so a file of bare "---" lines costs one pass over its bytes.
//
// Lines are split as the Kubernetes decoder (apimachinery's YAMLReader, which
// Argo CD and kubectl use) splits them, at LF only (a CR before it is part of
// the break); go-yaml then breaks a line at CR, NEL, LS and PS too, so a
// "line" here may be several to the parser: whether it holds content is
// decided on each of those, and lines are counted as go-yaml counts them (see
// lineBreaks). A "---" line that goes on after such a break is read as the
// decoder reads it: as the first line of a part (at the start of the stream,
// or right after the "---" line that ended the part before) it is kept;
// elsewhere the decoder drops the whole line as a separator; and one whose
// text after the marker is neither blank nor a comment is an invalid
// separator to it. What it does not read is
// not read here either, and reported to bad with its line.
func splitYAMLDocuments(data []byte, each func(yamlDocument), bad func(line int, msg string)) {
	start, startLine := 0, 1
	content := false // the current document has more than comments and markers
	marker := false  // the current document has a marker line
	partEmpty := true
	line := 1
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			end += off
			next = end + 1
		} else {
			end = len(data)
		}
		text := bytes.TrimSuffix(data[off:end], []byte("\r"))
		breaks := lineBreaks(text)
		// The decoder's separator: "---" then white space or a comment
		// (Unicode white space, so CR, NEL, LS and PS too).
		separator := false
		if rest, ok := bytes.CutPrefix(text, []byte("---")); ok {
			rest = bytes.TrimSpace(rest)
			separator = len(rest) == 0 || rest[0] == '#'
		}
		kept := separator && partEmpty // the decoder keeps it as its part's first line
		partEmpty = separator && !kept
		switch {
		case isDocumentMarker(text, '-') || bytes.HasPrefix(text, []byte("---")) && breakLen(text[3:]) > 0:
			own, hidden := text, []byte(nil)
			if breaks > 0 {
				own, hidden = splitAtBreak(text)
			}
			rest := bytes.TrimLeft(own[3:], " \t")
			inline := len(rest) > 0 && rest[0] != '#'
			if !inline && hasContent(hidden) && (!separator || !kept) {
				// The decoder drops the line, or fails on it.
				msg := "a \"---\" line goes on after a line break that is not LF (CR, NEL, LS or PS): kubectl and Argo CD take the whole line for a document separator and drop it, with what follows the break; it is not read (use LF line breaks)"
				if !separator {
					msg = "a \"---\" line goes on after a line break that is not LF (CR, NEL, LS or PS): kubectl and Argo CD refuse it as an invalid document separator and read no more of the file; it is not read (use LF line breaks)"
				}
				if bad != nil {
					bad(line, msg)
				}
				if content {
					each(yamlDocument{startLine, data[start:off]})
				}
				start, startLine = next, line+breaks+1
				content, marker = false, false
				break
			}
			switch {
			case content:
				each(yamlDocument{startLine, data[start:off]})
				start, startLine = off, line
			case marker:
				// The document the previous marker started is empty: drop it.
				start, startLine = off, line
			}
			marker = true
			content = inline || hasContent(hidden)
		case isDocumentMarker(text, '.') && breaks == 0:
			if content {
				each(yamlDocument{startLine, data[start:next]})
			}
			start, startLine = next, line+1
			content, marker = false, false
		case !content:
			content = hasContent(text)
		}
		line += breaks + 1
		off = next
	}
	if content {
		each(yamlDocument{startLine, data[start:]})
	}
}

// hasContent reports whether text, one line or several separated by CR, NEL,
// LS or PS, has a line that is more than blanks, a comment or a directive.
func hasContent(text []byte) bool {
	for len(text) > 0 {
		l := text
		if i, n := nextBreak(text); i >= 0 {
			l, text = text[:i], text[i+n:]
		} else {
			text = nil
		}
		if t := bytes.TrimLeft(l, " \t"); len(t) > 0 && t[0] != '#' && l[0] != '%' {
			return true
		}
	}
	return false
}

// splitAtBreak splits text at its first CR, NEL, LS or PS.
func splitAtBreak(text []byte) (before, after []byte) {
	i, n := nextBreak(text)
	if i < 0 {
		return text, nil
	}
	return text[:i], text[i+n:]
}

// nextBreak returns the offset and length of the first line break go-yaml
// knows in b other than LF (CR, NEL, LS, PS; CR LF is one), or -1.
func nextBreak(b []byte) (int, int) {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r', 0xc2, 0xe2:
			if n := breakLen(b[i:]); n > 0 {
				return i, n
			}
		}
	}
	return -1, 0
}

// breakLen is the length of the line break b starts with, as go-yaml reads
// line breaks (LF, CR, CR LF, NEL, LS, PS), or 0.
func breakLen(b []byte) int {
	switch {
	case len(b) == 0:
		return 0
	case b[0] == '\n':
		return 1
	case b[0] == '\r':
		if len(b) > 1 && b[1] == '\n' {
			return 2
		}
		return 1
	case len(b) > 1 && b[0] == 0xc2 && b[1] == 0x85:
		return 2
	case len(b) > 2 && b[0] == 0xe2 && b[1] == 0x80 && (b[2] == 0xa8 || b[2] == 0xa9):
		return 3
	}
	return 0
}

// lineBreaks counts the line breaks in b as go-yaml counts them: LF, CR, NEL,
// LS and PS, a CR LF pair once.
func lineBreaks(b []byte) int {
	if len(b) >= 64 && bytes.IndexByte(b, '\r') < 0 && bytes.IndexByte(b, 0xc2) < 0 && bytes.IndexByte(b, 0xe2) < 0 {
		return bytes.Count(b, []byte("\n")) // LF only: the usual case, counted fast
	}
	n := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n', '\r', 0xc2, 0xe2:
			if l := breakLen(b[i:]); l > 0 {
				n++
				i += l - 1
			}
		}
	}
	return n
}

// isDocumentMarker reports whether line is "---" (c '-') or "..." (c '.'),
// alone or followed by a space or tab.
func isDocumentMarker(line []byte, c byte) bool {
	if len(line) < 3 || line[0] != c || line[1] != c || line[2] != c {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t'
}

// LoadBytes decodes the content of one file (YAML, possibly with several
// documents, or JSON) named path. It returns the Kubernetes objects found and
// an evaluator.LoadError for every document that could not be decoded; the other
// documents are still returned.
//
// A document is an object when its root is a mapping with a string "kind".
// A document of kind List, or of a kind ending in "List" with an "items"
// sequence, yields its items instead (items of a FooList that have no kind
// get kind Foo and the list's apiVersion, as the API server omits them).
// Documents that are empty, comments, scalars, sequences or mappings without
// kind are skipped. A mapping key repeated in a document keeps its last
// value, as Kubernetes' and Argo CD's decoders do, and is recorded in
// evaluator.Object.Duplicates. Line numbers are 1-based and absolute in the file. A
// document yaml.v3 cannot parse is reported at the line yaml.v3 names
// (scanner errors point at the offending line, parser errors such as "did
// not find expected key" at the start of the enclosing collection) or, when
// it names none, at the document's first line. A leading UTF-8 BOM is
// ignored, UTF-16 and UTF-32 (with a byte order mark, or recognised as YAML
// 1.2 §5.2 says) are converted; other content with NUL bytes is reported as
// "not a text file", and a document with bytes that are not UTF-8 (Latin-1,
// say) as such at their line. Line breaks are read as the Kubernetes decoder
// reads them (Argo CD's and kubectl's: documents split at LF, lines at CR LF,
// LF, CR, NEL, LS and PS, and line numbers counted that way); where that
// decoder reads less than the file holds (a document after a marker that only
// a CR or NEL separates), what it leaves out is an error at its line. A
// stream that decoder reads as JSON has JSON's escapes read as encoding/json
// reads them.
//
// Its aliases may expand to AliasValuesBase values, and AliasValuesPerByte
// for each byte of data (a budget of its own: AliasBudget.Decoder decodes
// files within one budget).
func LoadBytes(path string, data []byte) ([]evaluator.Object, []evaluator.LoadError) {
	objs, errs, _ := decodeSource(nil, path, data, false)
	return objs, errs
}

// LoadBytesFiltered is LoadBytes that drops, before conversion, the objects of
// kinds no rule reads (see evaluator.ReadKind), and counts them.
func LoadBytesFiltered(path string, data []byte) ([]evaluator.Object, []evaluator.LoadError, int) {
	return decodeSource(nil, path, data, true)
}

// decodeFile is LoadBytes, its aliases expanded within m (which the bytes of
// data add to); with filter, objects of kinds no rule reads are dropped
// before conversion and counted.
func decodeFile(path string, data []byte, filter bool, m *aliasMeter) ([]evaluator.Object, []evaluator.LoadError, int) {
	m.read(len(data))
	data, lerr := decodeText(path, data)
	if lerr != nil {
		return nil, []evaluator.LoadError{*lerr}, 0
	}
	data = jsonEscapes(data)
	d := docDecoder{path: path, filter: filter, aliases: m, strs: map[string]*ast.Term{}}
	var objects []evaluator.Object
	var errs []evaluator.LoadError
	splitYAMLDocuments(data, func(doc yamlDocument) {
		objs, err := d.decode(doc)
		objects = append(objects, objs...)
		if err != nil {
			errs = append(errs, *err)
		}
		errs = append(errs, d.notes...)
		d.notes = d.notes[:0]
	}, func(line int, msg string) {
		errs = append(errs, evaluator.LoadError{Path: path, Line: line, Message: msg})
	})
	return objects, errs, d.skipped
}

// docDecoder decodes the documents of one file.
type docDecoder struct {
	path    string
	filter  bool        // drop (and count) objects of kinds no rule reads
	aliases *aliasMeter // the file's share of the run's alias budget
	skipped int
	strs    map[string]*ast.Term // the file's short strings' terms (yamlConverter.str)
	// notes are the input errors found in objects that are still read (a
	// waiver's expiry that is no date), reported after the document's own.
	notes []evaluator.LoadError
}

// decode decodes one document. yaml.v3 sees several only where a marker
// follows a line break that is not LF (see splitYAMLDocuments): the
// Kubernetes decoder reads the first of them alone, as one part of the
// stream, so the first is read and a later one that holds anything is an
// error at its line, and not read.
func (d *docDecoder) decode(doc yamlDocument) (objs []evaluator.Object, lerr *evaluator.LoadError) {
	path := d.path
	offset := doc.line - 1
	if line, msg, bad := invalidUTF8(doc.data); bad {
		return nil, &evaluator.LoadError{Path: path, Line: offset + line, Message: msg}
	}
	defer func() {
		// yaml.v3 turns its own panics into errors; this guards against
		// anything else so that one document cannot take the run down.
		if r := recover(); r != nil {
			lerr = &evaluator.LoadError{Path: path, Line: doc.line, Message: fmt.Sprintf("cannot decode YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(yamlAcceptVersion12(doc.data)))
	for first := true; ; first = false {
		var node yaml.Node
		if err := dec.Decode(&node); err != nil {
			if err == io.EOF {
				return objs, nil
			}
			line, msg := yamlErrorLine(err.Error(), doc.data)
			return objs, &evaluator.LoadError{Path: path, Line: offset + line, Message: msg}
		}
		if !first {
			if len(node.Content) == 0 || isNull(node.Content[0]) {
				continue
			}
			return objs, &evaluator.LoadError{Path: path, Line: offset + node.Content[0].Line, Message: `a YAML document starts here after a line break that is not LF (CR, NEL, LS or PS): kubectl and Argo CD split documents only at LF, and read only the first document up to the next LF "---" line; this one is not read (use LF line breaks)`}
		}
		found, err := d.objects(&node, offset)
		objs = append(objs, found...)
		if err != nil {
			return objs, err
		}
	}
}

// yamlAcceptVersion12 rewrites a "%YAML 1.2" directive before the
// document to "%YAML 1.1" (same length, so lines and columns are kept):
// yaml.v3 implements YAML 1.2 but rejects documents declaring it.
func yamlAcceptVersion12(data []byte) []byte {
	copied := false
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		line := data[off:end]
		if t := bytes.TrimLeft(line, " \t\r"); len(t) > 0 && t[0] != '#' && line[0] != '%' {
			break // the directives end at the first other line
		}
		if rest, ok := bytes.CutPrefix(line, []byte("%YAML")); ok {
			rest = bytes.TrimLeft(rest, " \t")
			if v, ok := bytes.CutPrefix(rest, []byte("1.2")); ok && (len(v) == 0 || v[0] == ' ' || v[0] == '\t' || v[0] == '\r') {
				if !copied {
					data = bytes.Clone(data)
					copied = true
				}
				i := off + len(line) - len(rest) + 2 // the "2" of "1.2"
				data[i] = '1'
			}
		}
		off = end + 1
	}
	return data
}

var yamlErrorPattern = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlParserProblems are the yaml.v3 parser (not scanner) messages, whose
// line numbers yaml.v3 reports 0-based.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlErrorLine splits a yaml.v3 error message into the 1-based line
// (relative to data; 1 when yaml.v3 gives none) and the message without
// the "yaml: line N:" prefix.
func yamlErrorLine(msg string, data []byte) (int, string) {
	m := yamlErrorPattern.FindStringSubmatch(msg)
	if m == nil {
		return 1, strings.TrimPrefix(msg, "yaml: ")
	}
	line, _ := strconv.Atoi(m[1])
	msg = m[2]
	if yamlParserProblems[msg] {
		line++
	}
	// Keep the line inside the document (errors at the end of the input
	// can point one line past it).
	lines := lineBreaks(data)
	if len(data) > 0 && breakLen(data[len(data)-1:]) == 0 && !bytes.HasSuffix(data, []byte("\u0085")) && !bytes.HasSuffix(data, []byte("\u2028")) && !bytes.HasSuffix(data, []byte("\u2029")) {
		lines++
	}
	line = max(1, min(line, lines))
	return line, msg
}

var (
	kindTerm       = ast.InternedTerm("kind")
	apiVersionTerm = ast.InternedTerm("apiVersion")
	metadataTerm   = ast.InternedTerm("metadata")
	itemsTerm      = ast.InternedTerm("items")
	nameTerm       = ast.InternedTerm("name")
	namespaceTerm  = ast.InternedTerm("namespace")
)

// objects returns the objects of one decoded document.
func (d *docDecoder) objects(doc *yaml.Node, offset int) ([]evaluator.Object, *evaluator.LoadError) {
	path := d.path
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode || !mayHaveKind(root) {
		return nil, nil
	}
	var dups []evaluator.DuplicateKey
	c := yamlConverter{lineOffset: offset, meter: d.aliases, duplicates: &dups, strs: d.strs}
	if d.filter {
		if kind, apiVersion, isString, ok := peekKind(root); ok {
			if !isString {
				return nil, nil // a kind that is not a string: not an object
			}
			if strings.HasSuffix(kind, "List") {
				objs, lerr := d.listItems(&c, root, kind, apiVersion, offset)
				return withDuplicates(objs, dups), lerr
			}
			if !evaluator.ReadKind(apiVersion, kind) {
				d.skipped++
				return nil, nil
			}
		}
	}
	t, err := c.term(root)
	if err != nil {
		return nil, conversionError(path, err, offset+root.Line)
	}
	obj, ok := t.Value.(ast.Object)
	if !ok {
		return nil, nil
	}
	kind, ok := stringField(obj, kindTerm)
	if !ok {
		return nil, nil
	}
	if items, ok := listItems(obj, kind); ok {
		return d.keep(withDuplicates(d.listObjects(root, obj, kind, items, offset), dups)), nil
	}
	objs := d.keep(withDuplicates([]evaluator.Object{newObject(path, offset+firstKeyLine(root), obj)}, dups))
	for _, o := range objs {
		d.checkExpiry(o, root, offset)
	}
	return objs, nil
}

// keep drops, when filtering, the objects of kinds no rule reads (those whose
// kind only a merge key or an alias revealed).
func (d *docDecoder) keep(objs []evaluator.Object) []evaluator.Object {
	if !d.filter {
		return objs
	}
	kept := objs[:0]
	for _, o := range objs {
		if evaluator.ReadKind(o.APIVersion, o.Kind) {
			kept = append(kept, o)
		} else {
			d.skipped++
		}
	}
	return kept
}

// listItems returns the objects of a List document whose items are filtered
// before conversion: each item of a kind no rule reads is only counted.
func (d *docDecoder) listItems(c *yamlConverter, root *yaml.Node, kind, apiVersion string, offset int) ([]evaluator.Object, *evaluator.LoadError) {
	var items *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "items" {
			items = resolveAlias(root.Content[i+1])
		}
	}
	if items == nil || items.Kind != yaml.SequenceNode {
		if kind == "List" && (items == nil || scalarIsNull(items)) {
			return nil, nil // an empty List
		}
		d.skipped++ // a List whose items are no list: an object of kind List
		return nil, nil
	}
	itemKind := strings.TrimSuffix(kind, "List")
	var objs []evaluator.Object
	for _, n := range items.Content {
		n = resolveAlias(n)
		if n.Kind != yaml.MappingNode {
			continue
		}
		k, v, isString, ok := peekKind(n)
		if ok && isString && nestedListNode(k, n) {
			d.nestedList(kind, k, offset+firstKeyLine(n))
			inner, lerr := d.listItems(c, n, k, v, offset)
			objs = append(objs, inner...)
			if lerr != nil {
				return objs, lerr
			}
			continue
		}
		if !ok && mayHaveKind(n) {
			// The item's kind comes from a merge key: convert it to know.
			t, err := c.term(n)
			if err != nil {
				return objs, conversionError(d.path, err, offset+n.Line)
			}
			o, isObj := t.Value.(ast.Object)
			if !isObj {
				continue
			}
			if k, isStr := stringField(o, kindTerm); isStr {
				if inner, isList := listItems(o, k); isList {
					d.nestedList(kind, k, offset+firstKeyLine(n))
					objs = append(objs, d.keep(d.listObjects(n, o, k, inner, offset))...)
					continue
				}
			}
			for _, kept := range d.keep([]evaluator.Object{newObject(d.path, offset+firstKeyLine(n), o)}) {
				d.checkExpiry(kept, n, offset)
				objs = append(objs, kept)
			}
			continue
		}
		named := k != ""
		if !named {
			if kind == "List" {
				continue // items of a List carry their kind
			}
			k = itemKind
			if v == "" {
				v = apiVersion
			}
		}
		if !evaluator.ReadKind(v, k) {
			d.skipped++
			continue
		}
		t, err := c.term(n)
		if err != nil {
			return objs, conversionError(d.path, err, offset+n.Line)
		}
		o, isObj := t.Value.(ast.Object)
		if !isObj {
			continue
		}
		if !named {
			o.Insert(kindTerm, ast.StringTerm(k))
			if o.Get(apiVersionTerm) == nil && v != "" {
				o.Insert(apiVersionTerm, ast.StringTerm(v))
			}
		}
		obj := newObject(d.path, offset+firstKeyLine(n), o)
		d.checkExpiry(obj, n, offset)
		objs = append(objs, obj)
	}
	return objs, nil
}

// nestedListNode reports whether a List's item, of kind kind, is a List
// itself: kind List, or a kind ending in List with an items sequence (as
// listItems reads a document).
func nestedListNode(kind string, n *yaml.Node) bool {
	if kind == "List" {
		return true
	}
	if !strings.HasSuffix(kind, "List") {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "items" {
			return resolveAlias(n.Content[i+1]).Kind == yaml.SequenceNode
		}
	}
	return false
}

// nestedList reports a List (kind inner) among the items of another (kind
// outer), at line. kubectl flattens nested lists (cli-runtime's
// FlattenListVisitor expands lists until none is left); Argo CD's repo server
// expands the items of a List once and applies an inner List as an object of
// its own, which no API serves, so the sync fails. The items are read, as
// kubectl reads them; the error says that Argo CD reads the file otherwise.
func (d *docDecoder) nestedList(outer, inner string, line int) {
	d.notes = append(d.notes, evaluator.LoadError{Path: d.path, Line: line, Message: fmt.Sprintf(
		"a %s inside a %s: kubectl reads its items (read here too), Argo CD does not (it applies the inner List as one object, and the sync fails); move its items to the outer List",
		safetext.Cut(inner, 64), safetext.Cut(outer, 64))})
}

// conversionError turns an error of the YAML converter into a LoadError, at
// line when the error names none.
func conversionError(path string, err error, line int) *evaluator.LoadError {
	l, msg := 0, err.Error()
	var ye *yamlError
	if errors.As(err, &ye) {
		l, msg = ye.Line, ye.Message
	}
	if l == 0 {
		l = line
	}
	return &evaluator.LoadError{Path: path, Line: l, Message: msg}
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// peekKind reads a mapping's kind and apiVersion from its nodes, without
// converting it: ok when the mapping has a kind key and apiVersion is written
// too or no merge key could bring one; isString when that kind is a string
// (a kind of another type makes the mapping no object). An explicit key wins
// over merged ones, so what is read here is what conversion would give.
func peekKind(m *yaml.Node) (kind, apiVersion string, isString, ok bool) {
	hasKind, hasAPIVersion, merge := false, false, false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := resolveAlias(m.Content[i])
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if yamlMergeKey(k) {
			merge = true
			continue
		}
		v := resolveAlias(m.Content[i+1])
		str := v.Kind == yaml.ScalarNode && scalarIsString(v)
		switch k.Value {
		case "kind":
			hasKind = true
			isString = str
			if str {
				kind = v.Value
			}
		case "apiVersion":
			hasAPIVersion = true
			if str {
				apiVersion = v.Value
			}
		}
	}
	return kind, apiVersion, isString, hasKind && (hasAPIVersion || !merge)
}

// scalarIsString reports whether a scalar node converts to a string, as the
// converter decides it (custom tags, timestamps and infinities are strings).
func scalarIsString(n *yaml.Node) bool {
	var c yamlConverter
	t, err := c.scalar(n)
	if err != nil {
		return false
	}
	_, ok := t.Value.(ast.String)
	return ok
}

// scalarIsNull reports whether a node converts to null.
func scalarIsNull(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	var c yamlConverter
	t, err := c.scalar(n)
	return err == nil && t.Value.Compare(ast.Null{}) == 0
}

// mayHaveKind reports whether a mapping has a "kind" key or a merge key
// that could bring one, so that other mappings (Helm values files,
// kustomizations without kind, ...) are skipped without being converted.
func mayHaveKind(m *yaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind == yaml.ScalarNode && (k.Value == "kind" || k.Value == "<<") {
			return true
		}
	}
	return false
}

// listItems returns the items of a List: kind List (items may be absent or
// null) or a kind ending in List with an items sequence.
func listItems(obj ast.Object, kind string) (*ast.Array, bool) {
	if !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	items := obj.Get(itemsTerm)
	if items != nil {
		if arr, ok := items.Value.(*ast.Array); ok {
			return arr, true
		}
	}
	if kind == "List" && (items == nil || items.Value.Compare(ast.Null{}) == 0) {
		return ast.NewArray(), true
	}
	return nil, false
}

// listObjects expands the items of a List document.
func (d *docDecoder) listObjects(root *yaml.Node, list ast.Object, kind string, items *ast.Array, offset int) []evaluator.Object {
	path := d.path
	// The YAML nodes of the items, for their lines.
	var itemNodes []*yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "items" {
			v := root.Content[i+1]
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if v.Kind == yaml.SequenceNode && len(v.Content) == items.Len() {
				itemNodes = v.Content
			}
		}
	}
	itemKind := strings.TrimSuffix(kind, "List")
	apiVersion, hasAPIVersion := stringField(list, apiVersionTerm)
	var objs []evaluator.Object
	for i := range items.Len() {
		item, ok := items.Elem(i).Value.(ast.Object)
		if !ok {
			continue
		}
		if k, ok := stringField(item, kindTerm); ok {
			if inner, isList := listItems(item, k); isList {
				node := root
				if itemNodes != nil {
					node = resolveAlias(itemNodes[i])
				}
				d.nestedList(kind, k, offset+firstKeyLine(node))
				objs = append(objs, d.listObjects(node, item, k, inner, offset)...)
				continue
			}
		}
		if _, ok := stringField(item, kindTerm); !ok {
			if kind == "List" {
				continue
			}
			item.Insert(kindTerm, ast.StringTerm(itemKind))
			if item.Get(apiVersionTerm) == nil && hasAPIVersion {
				item.Insert(apiVersionTerm, ast.StringTerm(apiVersion))
			}
		}
		line := firstKeyLine(root)
		node := root
		if itemNodes != nil {
			node = resolveAlias(itemNodes[i])
			line = firstKeyLine(node)
		}
		obj := newObject(path, offset+line, item)
		if !d.filter || evaluator.ReadKind(obj.APIVersion, obj.Kind) { // keep drops the others
			if node == root {
				node = nil // no item node: the error is at the item's line
			}
			d.checkExpiry(obj, node, offset)
		}
		objs = append(objs, obj)
	}
	return objs
}

// firstKeyLine returns the line of a mapping's first key (of the node
// itself when it has none).
func firstKeyLine(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode && len(n.Content) > 0 {
		return n.Content[0].Line
	}
	return n.Line
}

func newObject(path string, line int, obj ast.Object) evaluator.Object {
	o := evaluator.Object{Path: path, Line: line, Value: obj}
	o.APIVersion, _ = stringField(obj, apiVersionTerm)
	o.Kind, _ = stringField(obj, kindTerm)
	if md := obj.Get(metadataTerm); md != nil {
		if m, ok := md.Value.(ast.Object); ok {
			o.Namespace, _ = stringField(m, namespaceTerm)
			o.Name, _ = stringField(m, nameTerm)
		}
	}
	return o
}

// stringField returns obj[key] when it is a string.
func stringField(obj ast.Object, key *ast.Term) (string, bool) {
	v := obj.Get(key)
	if v == nil {
		return "", false
	}
	s, ok := v.Value.(ast.String)
	return string(s), ok
}

// withDuplicates gives each object the repeated keys of its document: for the
// items of a List, those at or after the item's first line and before the
// next item's.
func withDuplicates(objs []evaluator.Object, dups []evaluator.DuplicateKey) []evaluator.Object {
	if len(dups) == 0 || len(objs) == 0 {
		return objs
	}
	for _, d := range dups {
		// objs are in line order: the owner is the last one starting at or
		// before the key (a binary search, so that many keys in a long List
		// cost n log n, not n²).
		owner := max(0, sort.Search(len(objs), func(i int) bool { return objs[i].Line > d.Line })-1)
		objs[owner].Duplicates = append(objs[owner].Duplicates, d)
	}
	return objs
}
