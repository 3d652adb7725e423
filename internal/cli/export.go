package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/export"
	"github.com/flipflop-dev/flipflop/internal/safefile"
)

var exportTargets = []string{"conftest", "gatekeeper", "bundle", "all"}

const exportLong = `Writes flipflop's policies, as embedded in this binary, for another host:
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

Exit codes: 0 written; 2 a usage error or a file that could not be written.`

func newExportCommand(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:                   "export conftest|gatekeeper|bundle|all DIR|-",
		Short:                 "Write the policies for conftest, Gatekeeper or as an OPA bundle",
		DisableFlagsInUseLine: true,
		Long:                  exportLong,
		Example: examples(
			"flipflop export conftest policy/",
			"flipflop export gatekeeper - | kubectl apply -f - # apply it again once the templates are created",
			"flipflop export bundle flipflop.tar.gz",
		),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("export needs a target (%s) and a directory (or -)", joinOr(exportTargets))
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			switch len(args) {
			case 0:
				return exportTargets, cobra.ShellCompDirectiveNoFileComp
			case 1:
				return nil, cobra.ShellCompDirectiveDefault // a directory, or bundle's file
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), args[0], args[1], stdio)
		},
	}
}

func runExport(ctx context.Context, what, dir string, stdio IO) error {
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
	return nil, nil, usagef("unknown export target %q (want %s)", what, joinOr(exportTargets))
}
