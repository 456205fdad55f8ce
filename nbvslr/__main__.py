"""``python -m nbvslr`` and the ``nbvslr`` command.

``main`` imports nothing before it can catch a Ctrl-C or a SIGTERM: the command line's
modules (click, then numpy, pandas...) take a second or more to import, and a Ctrl-C
meanwhile ends the command with exit code 130 and one line (a SIGTERM: 143), as at any later
moment.

A signal's exception can be raised where Python ignores exceptions (a weak reference's
callback, a ``__del__``): it would print "Exception ignored in ..." with a traceback and be
lost. ``_resend`` catches that case and sends the signal again a moment later, from another
thread, once the code that ignores exceptions has returned.
"""

import signal
import sys

_early: list[int] = []
"""Ctrl-C or SIGTERM received before ``main`` installs its handlers (while this module's own
imports run), handed to them then."""


def _note_early(signum: int, frame: object) -> None:
    _early.append(signum)


# As the command (the console script, python -m nbvslr), the first thing done: a signal
# while the imports below run is noted, not a traceback. A library import leaves the
# process's handlers alone.
if __name__ == "__main__" or sys.argv[0].rsplit("/", 1)[-1] in ("nbvslr", "nbvslr.exe"):
    for _sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_sig, _note_early)

import os  # noqa: E402 (after the handlers: see above)
import threading  # noqa: E402

from nbvslr.errors import (  # noqa: E402
    Terminated,
    raise_if_stopped,
    signals_held,
    stop_on_signal,
    stop_received,
    stopped,
)


def _resend(unraisable) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and stop_received():
        return  # noted by the command's handler: the next raise_if_stopped() raises it
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        sig = signal.SIGTERM if isinstance(unraisable.exc_value, Terminated) else signal.SIGINT
        threading.Timer(0.01, os.kill, (os.getpid(), sig)).start()
        return
    sys.__unraisablehook__(unraisable)


def main() -> None:
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    sys.unraisablehook = _resend
    try:
        if _early:  # received while this module imported
            stop_on_signal(_early[0], None)
        with signals_held():  # click and the package: a Ctrl-C waits for the import
            from nbvslr.cli import main as cli_main

        raise_if_stopped()
        cli_main(sys.argv[1:])
    except KeyboardInterrupt as exc:
        what, code = stopped(exc)
        sys.stderr.write(f"{what}: rerun the same command to start again\n")
        sys.exit(code)


if __name__ == "__main__":
    main()
