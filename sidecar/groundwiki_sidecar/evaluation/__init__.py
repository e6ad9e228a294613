"""Retrieval quality: the sidecar's real query engine scored on test collections in BEIR format.
Imports every sidecar folder below it and the evaluation's own libraries (the `[eval]` extra)."""
