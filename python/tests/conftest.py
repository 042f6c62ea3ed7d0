"""Where the tests find the CLI to compare with: GPUFABRIC_CLI (set by CTest), else build/gpufabric."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("GPUFABRIC_CLI", str(ROOT / "build" / "gpufabric"))
    if not os.path.exists(path):
        pytest.fail(f"no gpufabric executable at {path}; build it or set GPUFABRIC_CLI")

    def run_json(*args):
        out = subprocess.run([path, *args, "--format", "json"], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    run_json.path = path
    return run_json


@pytest.fixture(scope="session")
def root():
    return ROOT
