//go:build !gatekeeper320

package main

import "github.com/open-policy-agent/gatekeeper/v3/pkg/gator"

// opaClient is gator's client without tracing (Gatekeeper v3.23.1's API).
func opaClient() (gator.Client, error) { return gator.NewOPAClient(false) }
