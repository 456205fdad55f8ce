"""The build backend: setuptools' own, asking for numba and what the compile imports when it
builds a wheel (``setup.py`` compiles the loops into it), and nothing more for an editable
install or an sdist."""

from __future__ import annotations

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403 - the rest of the backend as setuptools has it

#: What ``nbvslr.runner.warm.compile_all`` imports (nbvslr's own requirements, pyproject.toml)
COMPILE_REQUIRES = ["numpy>=1.26", "numba>=0.60", "scipy>=1.11", "pandas>=3.0", "pyyaml>=6.0",
                    "filelock>=3.30", "platformdirs>=4.0", "threadpoolctl>=3.1", "tqdm>=4.66"]


def get_requires_for_build_wheel(config_settings=None):  # noqa: D103 - PEP 517's hook
    return build_meta.get_requires_for_build_wheel(config_settings) + COMPILE_REQUIRES
