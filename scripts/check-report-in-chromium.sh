#!/usr/bin/env bash
# Opens a `gpufabric plan` HTML report in headless Chromium and checks what a reader would see:
# the page's script finished (data-report-ready="1"), the charts are there (at least 3 <svg>), no
# script error reached the console, and, with a third argument, that no injected script ran.
#
#   scripts/check-report-in-chromium.sh HTML_FILE OUT_DIR [CANARY]
#
# CANARY names the dataset attribute that the test plan's malicious strings try to set
# (`<script>document.body.dataset.pwned=1</script>`, `<img src=x onerror=...>`); pass "pwned" or
# "data-pwned". Any value checks that data-pwned is absent, plus data-CANARY when it is another name.
# Saves OUT_DIR/plan-report.png (1400x2400), OUT_DIR/dom.html and OUT_DIR/console.log.
# Exit 0: pass; 1: fail, with a one-line reason on stderr; 77: no Chromium here (skip).
set -euo pipefail

fail() {
  echo "check-report-in-chromium: FAIL: $*" >&2
  exit 1
}

[[ $# -ge 2 && $# -le 3 ]] || fail "usage: $0 HTML_FILE OUT_DIR [CANARY]"
html=$1
out_dir=$2
canary=${3:-}
[[ -f $html ]] || fail "no such file: $html"

browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$(command -v "$candidate")
    break
  fi
done
if [[ -z $browser ]]; then
  echo "check-report-in-chromium: SKIP: neither chromium nor chromium-browser is installed" >&2
  exit 77
fi

mkdir -p "$out_dir"
url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
# A throwaway profile, so no state of a previous run (or of the user's browser) leaks in.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# shellcheck disable=SC2054 # the comma in --window-size=1400,2400 is Chromium's syntax
flags=(--headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check --disable-extensions
  --user-data-dir="$profile" --window-size=1400,2400 --hide-scrollbars --enable-logging=stderr --v=0)

# (a) + (b): the DOM after the script ran, and the console on stderr.
timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=5000 --dump-dom "$url" >"$out_dir/dom.html" \
  2>"$out_dir/console.log" || fail "chromium --dump-dom exited with status $? (see $out_dir/console.log)"
# (c): the screenshot, in a second run because --dump-dom and --screenshot do not combine. Without a
# virtual-time budget: with one, Chromium sometimes captures before every tile is painted.
timeout 120 "$browser" "${flags[@]}" --screenshot="$out_dir/plan-report.png" "$url" \
  >/dev/null 2>>"$out_dir/console.log" || fail "chromium --screenshot exited with status $?"

grep -q 'data-report-ready="1"' "$out_dir/dom.html" ||
  fail "the page's script did not finish: no data-report-ready=\"1\" in the DOM"
svgs=$(grep -o '<svg' "$out_dir/dom.html" | wc -l)
((svgs >= 3)) || fail "expected at least 3 <svg> elements in the DOM, found $svgs"
if [[ -n $canary ]]; then
  name=${canary#data-}
  grep -q 'data-pwned' "$out_dir/dom.html" && fail "an injected script ran: data-pwned is set in the DOM"
  grep -q "data-$name=" "$out_dir/dom.html" && fail "an injected script ran: data-$name is set in the DOM"
fi
if grep -E 'Uncaught|ERROR:CONSOLE' "$out_dir/console.log" >"$out_dir/console-errors.log"; then
  fail "console error: $(head -n 1 "$out_dir/console-errors.log")"
fi
[[ -s $out_dir/plan-report.png ]] || fail "no screenshot was written to $out_dir/plan-report.png"
echo "check-report-in-chromium: PASS ($svgs <svg> elements; screenshot $out_dir/plan-report.png)"
