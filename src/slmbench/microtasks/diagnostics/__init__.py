"""Part B diagnostics: why a configuration is or is not eligible.

``thresholds`` (the log-prob threshold sweep), ``regimes`` (named failure regimes), ``diagnose``
(the diagnose run: readings -> thresholds -> regimes),
``probes`` (context length), ``cascade`` (BM25 then the model, and the ``Cascade`` router),
``shortlists`` (a cascade's shortlist and the model's order of it), ``routes`` (the routing
table),
``quantize`` (precisions loaded and read, torch) and ``precisions`` (their records and paired
comparisons, no torch). Import the submodules themselves.
"""

__all__ = ["cascade", "diagnose", "precisions", "probes", "quantize", "regimes", "routes",
           "shortlists", "thresholds"]
