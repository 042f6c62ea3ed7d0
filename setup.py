"""`pip install --no-build-isolation .`: the gpufabric Python module, built by CMake.

setuptools drives the project's own CMake build (Debian's cmake, ninja, pybind11-dev and
python3-dev; no package index is needed): it builds the `_gpufabric` target for the Python that
runs pip and puts the extension beside the package's Python files. The build directory is
`build/` when it was configured for this same Python (as `make python` does for Debian's
python3), else `build/python-<version>`, so a second interpreter does not reconfigure the first.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def _version() -> str:
    for line in (ROOT / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("project(gpufabric VERSION"):
            return line.split("VERSION")[1].split()[0]
    raise RuntimeError("no project(gpufabric VERSION ...) line in CMakeLists.txt")


def _build_dir() -> pathlib.Path:
    default = ROOT / "build"
    cache = default / "CMakeCache.txt"
    if cache.exists():
        for line in cache.read_text().splitlines():
            if line.startswith("Python3_EXECUTABLE:"):
                configured = line.split("=", 1)[1]
                if os.path.realpath(configured) == os.path.realpath(sys.executable):
                    return default
    return ROOT / "build" / f"python-{sys.version_info.major}.{sys.version_info.minor}"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = _build_dir()
        build.mkdir(parents=True, exist_ok=True)
        if not (build / "build.ninja").exists():
            subprocess.run(
                ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DPython3_EXECUTABLE={sys.executable}", "-DGPUFABRIC_BUILD_TESTS=OFF",
                 "-DGPUFABRIC_BUILD_BENCH=OFF"],
                check=True,
            )
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "-j", jobs, "--target", "_gpufabric"], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "gpufabric" / f"_gpufabric{suffix}"
        if not built.exists():
            raise RuntimeError(f"CMake did not build {built} (is pybind11-dev installed?)")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="gpufabric",
    version=_version(),
    description="Model, measure and plan GPU servers and clusters along the whole data path",
    packages=["gpufabric"],
    package_dir={"": "python"},
    package_data={"gpufabric": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("gpufabric._gpufabric", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
