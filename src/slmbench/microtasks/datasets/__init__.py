"""Part B's dataset builders: pinned packages -> items with provenance.

``records`` holds the item records; ``approval`` (with the labelling ``policy``) and ``bfcl``
build the built-in tasks' items from archives (:mod:`slmbench.core.sources`); ``history``
rebuilds the memory conversations and the longer histories made of them. Which task uses
which builder, and loading a built dataset, is each task's declaration
(:class:`slmbench.microtasks.spec.MicroTask`); ``slmbench data prepare`` runs them.
"""

__all__ = ["approval", "bfcl", "history", "policy", "records"]
