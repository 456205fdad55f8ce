"""setuptools' build (the project's metadata is in pyproject.toml) with one step added: a
wheel carries nbvslr's numba loops already compiled for the machine that builds it.

``pip install .`` builds the wheel on the machine it installs on; after copying the package
into the build folder, ``build_py`` runs ``nbvslr.runner.warm.main`` from there, so numba's
cache files (``nbvslr/kernels/__pycache__/*.nbi``, ``*.nbc``) and the stamps that say they
are complete land in the wheel beside the kernels. numba checks a cached loop by a hash of
its source, numba's version and the CPU, so a wheel installed on another kind of machine
(or with another numba) compiles on its first run, as it would without them. Where the
build cannot import numba (``pip install --no-build-isolation`` without it), the wheel is
built without them. An editable install (``make install``) compiles in the source tree
instead (the Makefile's last step).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

COMPILE = ("import sys; sys.path.insert(0, sys.argv[1]); "
           "from nbvslr.runner.warm import main; main()")


class BuildWithCompiledLoops(build_py):
    """``build_py``, then the loops compiled into the built package (not when editable)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or self.dry_run:
            return
        # numba's cache beside the built kernels (no NUMBA_CACHE_DIR), and no .pyc files
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        try:
            import numba  # noqa: F401
        except ImportError:
            print("nbvslr: numba is not importable here: the wheel is built without its "
                  "compiled loops (the first run compiles them)", file=sys.stderr)
            return
        built = Path(self.build_lib).resolve()
        # a build folder left by an earlier build may hold loops of older kernels: none kept
        shutil.rmtree(built / "nbvslr" / "kernels" / "__pycache__", ignore_errors=True)
        done = subprocess.run([sys.executable, "-c", COMPILE, str(built)], env=env)
        if done.returncode != 0:  # the wheel without them: the first run compiles, or says why
            shutil.rmtree(built / "nbvslr" / "kernels" / "__pycache__", ignore_errors=True)
            print("nbvslr: compiling the loops failed here: the wheel is built without them",
                  file=sys.stderr)


setup(cmdclass={"build_py": BuildWithCompiledLoops})
