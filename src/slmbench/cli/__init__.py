"""The ``slmbench`` command line: parse arguments, call the library, print. Nothing else."""

__all__ = ["main"]
