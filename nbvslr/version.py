"""The package's version, in a module of its own: the modules that record it (run.json,
the checkpoint fingerprint, ``nbvslr --version``) import it from here, not from the
package, whose ``__init__`` gives access to the Python API."""

__version__ = "0.1.0"
