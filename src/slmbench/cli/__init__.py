"""The ``slmbench`` command line."""
