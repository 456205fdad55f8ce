"""``python -m nbvslr`` and the ``nbvslr`` command.

``main`` imports nothing before it can catch a Ctrl-C or a SIGTERM: the command line's
modules (click, then numpy, pandas...) take a second or more to import, and a Ctrl-C
meanwhile ends the command with exit code 130 and one line (a SIGTERM: 143), as at any later
moment.
"""

import signal
import sys

from nbvslr.errors import stop_on_sigterm, stopped


def main() -> None:
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        from nbvslr.cli import main as cli_main

        cli_main(sys.argv[1:])
    except KeyboardInterrupt as exc:
        what, code = stopped(exc)
        sys.stderr.write(f"{what}: rerun the same command to start again\n")
        sys.exit(code)


if __name__ == "__main__":
    main()
