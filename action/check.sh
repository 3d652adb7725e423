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
# INPUT_PATHS: paths separated by spaces or new lines (default ".");
# INPUT_ARGS: extra flags, one per line; INPUT_FAIL_ON; INPUT_SARIF ("true" or
# "false"); INPUT_SARIF_FILE; INPUT_SUMMARY ("true" or "false").
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

if [[ ${INPUT_SARIF:-true} == true ]]; then
  sarif=${INPUT_SARIF_FILE:-flipflop.sarif}
  # The same findings for code scanning; the verdict is the run above's.
  flipflop check -o sarif --fail-on never "${args[@]}" -- "${paths[@]}" >"$sarif"
  sarif_code=$?
  if [[ -s $sarif ]]; then
    echo "sarif-file=$sarif" >>"$out"
  else
    echo "::warning title=flipflop::no SARIF report was written (exit $sarif_code)"
  fi
fi
exit 0
