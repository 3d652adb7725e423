// Package evalcount counts the policy expressions OPA evaluates: the figure
// the evaluation budgets and the growth tests hold, without a profiler.
package evalcount

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Counter is a topdown.QueryTracer that counts the expressions evaluated:
// the sum of the num_eval of OPA's profiler (one for each evaluation of an
// expression, a redo not counted) without its clock and its tables by
// file and line, which cost more than the evaluation they watch. Not safe
// for concurrent use: one per evaluation.
type Counter struct {
	n int
}

// Enabled reports that the counter wants events.
func (c *Counter) Enabled() bool { return true }

// Config asks for no locals: only the events' kinds and nodes are read.
func (c *Counter) Config() topdown.TraceConfig { return topdown.TraceConfig{} }

// TraceEvent counts an evaluation of an expression.
func (c *Counter) TraceEvent(e topdown.Event) {
	if e.Op != topdown.EvalOp {
		return
	}
	if x, ok := e.Node.(*ast.Expr); ok && x != nil {
		c.n++
	}
}

// Count is the number of expressions evaluated so far.
func (c *Counter) Count() int { return c.n }
