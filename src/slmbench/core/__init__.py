"""The shared core under both halves: errors, cache paths, statistics, pinned sources, SQLite.

Import the submodules themselves (``from slmbench.core.stats import wilson``): this package
re-exports nothing, so importing ``slmbench.core.errors`` never loads scipy.
See ``RULES.md`` beside this file.
"""

__all__ = ["errors", "jsonl", "paths", "plugins", "pysyntax", "sources", "sqlite", "stats",
           "tomlfile", "version", "yamlfile"]
