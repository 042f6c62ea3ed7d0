#!/usr/bin/env bash
# Installs the Debian packages gpufabric needs, if any are missing. Run as root (as CI does);
# as another user it prints the apt-get line to run instead.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libfmt-dev
          libhwloc-dev hwloc-nox libsqlite3-dev libturbojpeg0-dev zlib1g-dev libopenmpi-dev openmpi-bin
          libgtest-dev libgmock-dev libbenchmark-dev
          clang libclang-rt-dev llvm  # clang + libFuzzer + llvm-symbolizer: `make fuzz`
          chromium)  # headless, to render the plan's HTML report in a test
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: not root; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
