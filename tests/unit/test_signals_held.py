"""Signals honoured at any moment, imports included: a Ctrl-C or SIGTERM that
arrives while a module is imported waits for the import to finish, then stops the command
with its one line and exit code, instead of breaking the import half way."""

from __future__ import annotations

import signal
import sys

import pytest
from click.testing import CliRunner

import nbvslr.cli as cli_module
from nbvslr import errors

MODULE = '''
import os, signal, click
os.kill(os.getpid(), signal.{sig})
import time
time.sleep(0.05)  # the handler has run by now
FINISHED = True

@click.command("fake")
def fake():
    click.echo("ran")
'''


@pytest.fixture
def handlers():
    """The command's handlers (nbvslr.__main__ installs them), restored afterwards."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in saved:
        signal.signal(s, errors.stop_on_signal)
    yield
    for s, h in saved.items():
        signal.signal(s, h)
    errors._received.clear()


def _fake_module(tmp_path, monkeypatch, name, sig):
    (tmp_path / f"{name}.py").write_text(MODULE.format(sig=sig))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)


@pytest.mark.parametrize(("sig", "raised"), [("SIGINT", KeyboardInterrupt),
                                             ("SIGTERM", errors.Terminated)])
def test_a_signal_during_an_import_is_raised_once_the_import_is_done(
        tmp_path, monkeypatch, handlers, sig, raised):
    """The module imports completely; the signal's exception comes after it."""
    name = f"fake_held_{sig.lower()}"
    _fake_module(tmp_path, monkeypatch, name, sig)
    with pytest.raises(raised):
        errors.import_held(name)
    assert sys.modules[name].FINISHED


@pytest.mark.parametrize(("sig", "code", "word"), [("SIGINT", 130, "interrupted"),
                                                   ("SIGTERM", 143, "terminated")])
def test_a_signal_while_a_command_imports_is_one_line_and_its_exit_code(
        tmp_path, monkeypatch, handlers, sig, code, word):
    """SIGTERM while a command's modules import: exit 143 (SIGINT 130), one line."""
    name = f"fake_cmd_{sig.lower()}"
    _fake_module(tmp_path, monkeypatch, name, sig)
    monkeypatch.setitem(cli_module.COMMANDS, "fake", (name, "fake"))
    result = CliRunner().invoke(cli_module.cli, ["fake"])
    assert result.exit_code == code, result.output
    assert result.output.strip().splitlines() == [
        f"{word}: rerun the same command to start again"]
    assert sys.modules[name].FINISHED
