//go:build gatekeeper320

package main

import "github.com/open-policy-agent/gatekeeper/v3/pkg/gator"

// opaClient is gator's client without tracing and without the CEL driver, as
// Gatekeeper v3.20.1's API takes it (built with -tags gatekeeper320
// -modfile=go.gatekeeper-3.20.mod: that release's modules and its OPA v1.7.1).
func opaClient() (gator.Client, error) { return gator.NewOPAClient(false, false) }
