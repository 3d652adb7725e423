// Package policies embeds flipflop's Rego: the core model (lib/), one folder per
// rule (rules/), and the host entrypoints (hosts/). Test files are embedded too and
// filtered out by the loaders that build evaluators and bundles.
package policies

import "embed"

// FS holds every .rego file of the policy tree.
//
//go:embed lib/flipflop/*.rego rules/*/*.rego hosts/conftest/*.rego hosts/gatekeeper/*.rego
var FS embed.FS

// Samples holds every rule's sample estates (rules/<rule>/samples/{fires,clean}/<case>/),
// from which the Gatekeeper samples and gator suites are generated.
//
//go:embed rules/*/samples
var Samples embed.FS
