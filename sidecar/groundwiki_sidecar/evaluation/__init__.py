"""Retrieval quality: the sidecar's real query engine scored on test collections in BEIR format."""
