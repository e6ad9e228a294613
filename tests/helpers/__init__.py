"""Helpers the test folders share: waiting on a sidecar, reading rendered HTML, a stand-in embedding server."""
