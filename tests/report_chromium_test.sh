#!/usr/bin/env bash
# The plan's HTML report as a reader sees it: the default plan's report and one from a plan whose
# names hold markup and scripts, each opened in headless Chromium (scripts/check-report-in-chromium.sh):
# the page's script ran to the end, the charts are drawn, no console error, no injected script ran,
# and a screenshot is saved. Exit 77 (skipped) only where Chromium is not installed.
set -euo pipefail
bin=$1 root=$2 work=$3
# The reports and screenshots go to $work (in the build tree, kept to be looked at), emptied first
# so that nothing from an earlier run can pass for this run's output. Everything else (Chromium's
# profile and whatever it and gpufabric write to TMPDIR) goes to a directory of this test's own,
# removed on exit.
rm -rf "$work"
mkdir -p "$work"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
"$bin" plan --quiet --report "$work/plan-report.html" >/dev/null
"$bin" plan "$root/tests/data/plan_xss.yaml" --quiet --report "$work/plan-xss.html" >/dev/null
grep -q 'document.body.dataset.pwned=1' "$work/plan-xss.html" || { echo "the hostile names did not reach the report"; exit 1; }
rc=0
bash "$root/scripts/check-report-in-chromium.sh" "$work/plan-report.html" "$work/shot-default" || rc=$?
[[ $rc -eq 0 ]] || exit "$rc"
bash "$root/scripts/check-report-in-chromium.sh" "$work/plan-xss.html" "$work/shot-xss" pwned
