"""``python -m nbvslr``: the same as the ``nbvslr`` command."""

from nbvslr.cli import main

if __name__ == "__main__":
    main()
