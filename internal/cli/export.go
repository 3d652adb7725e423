package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/export"
	"github.com/flipflop-dev/flipflop/internal/safefile"
)

const exportUsage = `Usage: flipflop export conftest|gatekeeper|bundle|all DIR|-
       flipflop export bundle FILE.tar.gz

Writes flipflop's policies, as embedded in this binary, for another host:
  conftest    the policy folder for: conftest test --combine -p DIR <manifests>
  gatekeeper  the Flipflop ConstraintTemplate, SyncSet, Config snippet, its constraint (every rule,
              warn at admission, never audited) in constraint.yaml, a deny and warn pair in
              deny-and-warn/, samples, a gator suite; apply DIR, wait, then one of the two
              (see DIR/kustomization.yaml).
              With "-", the SyncSet, the template and constraint.yaml as one YAML stream for kubectl apply -f -:
              the constraint is refused until Gatekeeper has made its kind from the template,
              so apply it again once kubectl wait --for=jsonpath='{.status.created}'=true
              constrainttemplate/flipflop --timeout=120s returns
  bundle      the OPA bundle (tar.gz) for: opa eval -b flipflop.tar.gz -i input.json data.flipflop.findings;
              DIR/flipflop.tar.gz, or the file itself when the target ends in .tar.gz or .tgz
  all         conftest/, gatekeeper/ and flipflop.tar.gz under DIR (what make bundles writes to bundles/)
`

func runExport(ctx context.Context, args []string, stdio IO) error {
	fs := pflag.NewFlagSet("export", pflag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	fs.Usage = func() { fmt.Fprint(stdio.Err, exportUsage) }
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return usagef("export needs a target and a directory (or -)")
	}
	what, dir := fs.Arg(0), fs.Arg(1)
	files, stream, err := exportFiles(ctx, what)
	if err != nil {
		return err
	}
	if dir == "-" {
		if stream == nil {
			return usagef("export %s cannot write to standard output; give a directory", what)
		}
		_, err := stdio.Out.Write(stream)
		return err
	}
	if tarball(dir) {
		if what != "bundle" {
			return usagef("export %s writes a directory, and %q names a tarball: give a directory (only export bundle writes a .tar.gz file)", what, dir)
		}
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return usagef("export bundle: %q is a directory; remove it or give another file name", dir)
		}
		if err := safefile.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		return safefile.Write(dir, files["flipflop.tar.gz"], 0o644)
	}
	return files.Write(dir)
}

// tarball says that an export target names a gzipped tar file, not a directory.
func tarball(target string) bool {
	return strings.HasSuffix(target, ".tar.gz") || strings.HasSuffix(target, ".tgz")
}

// exportFiles builds the files of one export target, and what it writes to
// standard output (nil when it cannot).
func exportFiles(ctx context.Context, what string) (export.Files, []byte, error) {
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		return nil, nil, err
	}
	switch what {
	case "conftest":
		f, err := export.Conftest()
		return f, nil, err
	case "bundle":
		b, err := export.Bundle()
		return export.Files{"flipflop.tar.gz": b}, b, err
	case "gatekeeper":
		f, err := export.Gatekeeper(ctx, ev)
		if err != nil {
			return nil, nil, err
		}
		return f, export.ApplyStream(f), nil
	case "all":
		all := export.Files{}
		c, err := export.Conftest()
		if err != nil {
			return nil, nil, err
		}
		all.Add("conftest/", c)
		g, err := export.Gatekeeper(ctx, ev)
		if err != nil {
			return nil, nil, err
		}
		all.Add("gatekeeper/", g)
		b, err := export.Bundle()
		if err != nil {
			return nil, nil, err
		}
		all["flipflop.tar.gz"] = b
		return all, nil, nil
	}
	return nil, nil, usagef("unknown export target %q (want conftest, gatekeeper, bundle or all)", what)
}
