"""The package version, defined once (the root package and the study page read it here)."""

VERSION = "0.1.0"
