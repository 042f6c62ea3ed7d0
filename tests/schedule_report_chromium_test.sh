#!/usr/bin/env bash
# The schedule's HTML report as a reader sees it: a slice of the PAI 2023 trace (its first 2,000
# pods on its first 300 nodes, so the sanitizer build stays quick) compared under every policy
# (one fill seed), and a small trace whose job and node names hold markup, each opened in
# headless Chromium: the charts are in the DOM (the fill curve, allocation and fragmentation over
# time), the hostile names arrive as text (no element they try to inject exists), and a screenshot
# is saved. Exit 77 (skipped) only where Chromium is not installed.
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
browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$(command -v "$candidate"); break; fi
done
[[ -n $browser ]] || { echo "SKIP: no chromium"; exit 77; }
trace=$root/data/traces/alibaba-pai-2023
head -2001 "$trace/openb_pod_list_default.csv" >"$work/pods.csv"
head -301 "$trace/openb_node_list_gpu_node.csv" >"$work/nodes.csv"
"$bin" schedule --trace "$work/pods.csv" --nodes-file "$work/nodes.csv" --compare --repeats 1 --quiet \
  --report "$work/schedule-report.html" >/dev/null
# The hostile job asks for more GPUs than the node has, so the report names it (unschedulable).
printf 'name,submit,duration,gpus,pods\n"<img src=x id=pwned1 onerror=alert(1)>",0,100,9,1\nb,5,50,4,1\nc,6,50,4,1\n' >"$work/xss-jobs.csv"
printf 'sn,cpu_milli,memory_mib,gpu,model\n"<script id=pwned2>x</script>",64000,262144,8,G\n' >"$work/xss-nodes.csv"
"$bin" schedule --trace "$work/xss-jobs.csv" --nodes-file "$work/xss-nodes.csv" --compare --quiet \
  --report "$work/schedule-xss.html" >/dev/null
profile=$scratch/profile
# shellcheck disable=SC2054 # the comma in --window-size=1200,2000 is Chromium's syntax
flags=(--headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check --disable-extensions
  --user-data-dir="$profile" --window-size=1200,2000 --hide-scrollbars)
for page in schedule-report schedule-xss; do
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$work/$page.html" >"$work/$page.dom.html" 2>/dev/null
  timeout 120 "$browser" "${flags[@]}" --screenshot="$work/$page.png" "file://$work/$page.html" >/dev/null 2>&1
  [[ -s $work/$page.png ]] || { echo "FAIL: no screenshot of $page"; exit 1; }
  svgs=$(grep -o '<svg' "$work/$page.dom.html" | wc -l)
  ((svgs >= 2)) || { echo "FAIL: $page: expected at least 2 charts, found $svgs"; exit 1; }
done
grep -q 'Unallocated GPUs as the cluster fills' "$work/schedule-report.dom.html" || { echo "FAIL: no fill chart"; exit 1; }
if grep -q 'id="pwned' "$work/schedule-xss.dom.html"; then echo "FAIL: a hostile name became markup"; exit 1; fi
grep -q '&lt;img src=x id=pwned1' "$work/schedule-xss.dom.html" || { echo "FAIL: the hostile job name is missing"; exit 1; }
echo "ok: $work/schedule-report.png"
