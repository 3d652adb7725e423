#!/usr/bin/env bash
# Runs flipflop check for the GitHub Action (action.yml): once with -o github
# (annotations on the pull request, the summary in the log; its exit code is
# the verdict), which with INPUT_SUMMARY also appends the report as Markdown to
# the job summary ($GITHUB_STEP_SUMMARY: --summary, what -o markdown prints),
# and, when SARIF is asked for, once more with -o sarif into
# $INPUT_SARIF_FILE for code scanning. Writes exit-code (and sarif-file) to
# $GITHUB_OUTPUT and exits 0: the action's last step fails the job, after the
# SARIF upload.
#
# The working directory is the pull request's checkout, where any path may be
# a symbolic link the pull request committed: the SARIF report goes to a new
# directory under $RUNNER_TEMP unless INPUT_SARIF_FILE names a file, and
# flipflop writes it (--out), refusing a link or a file that is not a regular
# one; the shell redirects nothing into the checkout.
#
# INPUT_PATHS: paths separated by spaces or new lines (default ".");
# INPUT_ARGS: extra flags, one per line; INPUT_FAIL_ON; INPUT_SARIF ("true" or
# "false"); INPUT_SARIF_FILE (default: flipflop.sarif in a new directory under
# $RUNNER_TEMP); INPUT_SUMMARY ("true" or "false").
set -uo pipefail

read -r -d '' -a paths <<<"${INPUT_PATHS:-.}" || true
[[ ${#paths[@]} -gt 0 ]] || paths=(.)
args=()
while IFS= read -r line; do
  line=${line#"${line%%[![:space:]]*}"}
  line=${line%"${line##*[![:space:]]}"}
  [[ -n $line ]] && args+=("$line")
done <<<"${INPUT_ARGS:-}"
fail_on=${INPUT_FAIL_ON:-error}
out=${GITHUB_OUTPUT:-/dev/null}

summary=()
if [[ ${INPUT_SUMMARY:-true} == true && -n ${GITHUB_STEP_SUMMARY:-} ]]; then
  summary=(--summary "$GITHUB_STEP_SUMMARY")
fi

flipflop check -o github --fail-on "$fail_on" "${summary[@]}" "${args[@]}" -- "${paths[@]}"
code=$?
echo "exit-code=$code" >>"$out"

# linked PATH prints the first symbolic link on the way to PATH (PATH itself
# included; for an absolute path, only PATH itself) and succeeds, or fails when
# there is none.
linked() {
  local p=$1 at=
  if [[ $p != /* ]]; then
    local part rest=$p
    while [[ $rest == */* ]]; do
      part=${rest%%/*}
      rest=${rest#*/}
      at=${at:+$at/}$part
      [[ -n $part && $part != . && $part != .. && -L $at ]] && { printf '%s' "$at"; return 0; }
    done
  fi
  [[ -L $p ]] && { printf '%s' "$p"; return 0; }
  return 1
}

if [[ ${INPUT_SARIF:-true} == true ]]; then
  sarif=${INPUT_SARIF_FILE:-}
  if [[ -z $sarif ]]; then
    # Outside the checkout, in a directory made now: nothing a pull request
    # placed can be there.
    sarif=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/flipflop-sarif.XXXXXX")/flipflop.sarif
  elif link=$(linked "$sarif"); then
    echo "::warning title=flipflop::no SARIF report was written: $link is a symbolic link (flipflop writes no file through one)"
    sarif=
  elif [[ -e $sarif && ! -f $sarif ]]; then
    echo "::warning title=flipflop::no SARIF report was written: $sarif is not a regular file"
    sarif=
  else
    # Whatever the checkout holds there is not flipflop's report: only a
    # file flipflop writes now may be uploaded.
    rm -f -- "$sarif"
  fi
  if [[ -n $sarif ]]; then
    # The same findings for code scanning; the verdict is the run above's.
    # flipflop writes the file (--out), refusing a link or a special file.
    flipflop check -o sarif --fail-on never "${args[@]}" --out "$sarif" -- "${paths[@]}"
    sarif_code=$?
    if [[ -f $sarif && ! -L $sarif && -s $sarif ]] && ! linked "$sarif" >/dev/null; then
      echo "sarif-file=$sarif" >>"$out"
    else
      echo "::warning title=flipflop::no SARIF report was written (exit $sarif_code)"
    fi
  fi
fi
exit 0
