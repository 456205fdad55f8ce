"""Start-up: ``nbvslr --help``, ``--version``, ``configs`` and ``datasets`` import none of
numpy, pandas, matplotlib or numba (benchmarks/startup.py times them), and the help's
one-line summaries, kept in the command line's table, are the commands' own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nbvslr.cli import COMMANDS, SHORT_HELP, cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "matplotlib", "numba", "scipy")

# runs the command as ``python -m nbvslr`` does, then prints which heavy modules it imported
PROBE = """
import json, sys
sys.argv = ["nbvslr", *json.loads(sys.argv[1])]
from nbvslr.__main__ import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nHEAVY " + json.dumps(sorted(m for m in MODULES if m in sys.modules)) + "\\n")
""".replace("MODULES", repr(HEAVY))


def _heavy_imports(args: list[str], tmp_path: Path) -> tuple[list[str], str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("HEAVY "), done.stderr
    return json.loads(last[len("HEAVY "):]), done.stdout


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["configs"],
                                  ["configs", "show", "pima"], ["datasets"]])
def test_quick_commands_import_no_numerics(args, tmp_path):
    """The quick commands answer without importing numpy, pandas, matplotlib, numba, scipy."""
    heavy, out = _heavy_imports(args, tmp_path)
    assert out.strip(), "the command printed nothing"
    assert heavy == []


def test_probe_sees_a_command_that_imports_numpy(tmp_path):
    """The probe above does see numpy when a command imports it (``run --help``)."""
    heavy, _ = _heavy_imports(["run", "--help"], tmp_path)
    assert "numpy" in heavy


def test_short_help_table_matches_each_command():
    """``nbvslr --help`` shows, for each command, the summary the command itself declares."""
    assert set(SHORT_HELP) == set(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(None, name)
        assert command.short_help == SHORT_HELP[name], name
