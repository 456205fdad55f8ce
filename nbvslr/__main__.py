"""``python -m nbvslr`` and the ``nbvslr`` command.

``main`` imports nothing before it can catch a Ctrl-C: the command line's modules (click,
then numpy, pandas...) take a second or more to import, and a Ctrl-C meanwhile ends the
command with exit code 130 and one line, as at any later moment.
"""

import sys

INTERRUPTED = 130


def main() -> None:
    try:
        from nbvslr.cli import main as cli_main

        cli_main(sys.argv[1:])
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: rerun the same command to start again\n")
        sys.exit(INTERRUPTED)


if __name__ == "__main__":
    main()
