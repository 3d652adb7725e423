package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// connectionProblem describes an error that means nothing at all can be read
// (the server is unreachable, or rejects the credentials), or returns "".
func connectionProblem(err error, host string) string {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("the API server at %s rejected the credentials (401 Unauthorized): check the kubeconfig user, or log in again", safeHost(host))
	case errors.As(err, &status):
		return ""
	case isTimeout(err):
		return fmt.Sprintf("the API server at %s did not answer in time (%v): raise --request-timeout or check the network", safeHost(host), unwrapURL(err))
	}
	return fmt.Sprintf("cannot reach the API server at %s: %v", safeHost(host), unwrapURL(err))
}

// describe says what a failed task means for the result.
func describe(t task, res result, host string) string {
	var what string
	var tooLarge *ResponseTooLargeError
	err := res.err
	switch {
	case apierrors.IsForbidden(err):
		what = "forbidden (403): " + statusMessage(err)
		what += "; grant get and list on " + t.res.String() + " (see deploy/rbac.yaml)"
		if t.namespace == "" && t.res.Namespaced && t.name == "" {
			if t.res.ArgoCD {
				what += ", or name the namespaces you may read with --argocd-namespace"
			} else {
				what += ", or name the namespaces you may read with -n"
			}
		}
	case apierrors.IsUnauthorized(err):
		what = "the API server rejected the credentials (401 Unauthorized)"
	case apierrors.IsNotFound(err):
		what = "the API server does not serve it (its CRD was removed while reading?)"
	case apierrors.IsResourceExpired(err):
		what = "the list changed too much while it was read page by page (410 Gone, twice); run again, or raise --chunk-size"
	case isTimeout(err):
		what = fmt.Sprintf("timed out (%v); raise --request-timeout", unwrapURL(err))
	case errors.Is(err, context.Canceled):
		what = "interrupted"
	case errors.As(err, new(*pagingError)):
		what = err.Error()
	case guardProblem(err) != "":
		what = guardProblem(err)
		if errors.As(err, &tooLarge) && t.name == "" {
			what += "; read the list in smaller pages with a smaller --chunk-size"
		}
	default:
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			what = fmt.Sprintf("the API server answered %d: %s", status.Status().Code, statusMessage(err))
		} else {
			what = fmt.Sprintf("cannot reach the API server at %s: %v", safeHost(host), unwrapURL(err))
		}
	}
	kinds := t.res.plural()
	where := ""
	if t.namespace != "" {
		where = " in " + t.namespace
	}
	if res.pages > 0 {
		return fmt.Sprintf("%s after %d page(s), %d object(s); the %s read so far are checked, the rest%s were not read: findings that involve them may be missing",
			what, res.pages, res.read, kinds, where)
	}
	return fmt.Sprintf("%s; %s%s were not read: findings that involve them may be missing", what, kinds, where)
}

// guardProblem describes an error of the guard round tripper (a response
// longer than the bound, a redirect to another origin), or returns "".
func guardProblem(err error) string {
	var tooLarge *ResponseTooLargeError
	var redirect *RedirectError
	switch {
	case errors.As(err, &tooLarge):
		return tooLarge.Error() + " (--max-response-size)"
	case errors.As(err, &redirect):
		return redirect.Error()
	}
	return ""
}

func statusMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return ""
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unwrapURL drops the "Get https://...?limit=500&continue=<token>" wrapper of a
// transport error: the request URL says nothing useful and may be long.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// safeHost returns the server URL without user information.
func safeHost(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return host
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// Redact removes cfg's credentials (bearer token, password, client key) from
// msg: a last line of defence for messages about requests made through cfg.
func Redact(cfg *rest.Config, msg string) string { return newRedactor(cfg).clean(msg) }

// ConnectionProblem describes an error of a request to the API server at host
// that means nothing can be done there (unreachable, credentials rejected, a
// timeout), or returns "" for an answer of the API server (a 403, a 404).
func ConnectionProblem(err error, host string) string { return connectionProblem(err, host) }

// redactor removes credentials of a rest.Config from messages, as a last line
// of defence: no message is meant to contain them in the first place.
type redactor struct{ secrets []string }

func newRedactor(cfg *rest.Config) redactor {
	var r redactor
	for _, s := range []string{cfg.BearerToken, cfg.Password, string(cfg.KeyData)} {
		if len(s) >= 6 {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

func (r redactor) clean(msg string) string {
	for _, s := range r.secrets {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return msg
}
