#!/usr/bin/env bash
# Installs the Debian packages gpufabric needs, if any are missing. Run as root (as CI does);
# as another user it prints the apt-get line to run instead. Chromium (for the test that opens
# the plan's HTML report) is optional: where it cannot be installed, that one test is skipped.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libfmt-dev
          libhwloc-dev hwloc-nox libsqlite3-dev libcsv-dev libturbojpeg0-dev zlib1g-dev libopenmpi-dev openmpi-bin
          libgtest-dev libgmock-dev libbenchmark-dev
          libpugixml-dev  # the importers read NCCL's topology XML
          python3  # scripts/readme_outputs.py: the README's outputs (test readme_outputs, `make readme`)
          python3-dev pybind11-dev python3-setuptools  # the Python module (`import gpufabric`), setup.py
          python3-pytest python3-pandas python3-matplotlib  # its tests and the example sweep (examples/)
          python3-pip  # `pip install --no-build-isolation .` (README, Python)
          clang libclang-rt-dev llvm)  # clang + libFuzzer + llvm-symbolizer: `make fuzz`
optional=(chromium)  # headless, to render the plan's HTML report in a test
missing_of() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}
mapfile -t missing < <(missing_of "${packages[@]}")
mapfile -t missing_optional < <(missing_of "${optional[@]}")
if [ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: not root; run: sudo apt-get install -y ${missing[*]} ${missing_optional[*]}" >&2
    exit 1
  fi
  echo "install-deps: optional ${missing_optional[*]} missing (sudo apt-get install -y ${missing_optional[*]})" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing_optional[*]} (optional)"
  apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" ||
    echo "install-deps: warning: could not install ${missing_optional[*]}; the report test will be skipped" >&2
fi
