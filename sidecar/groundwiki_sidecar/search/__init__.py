"""Hybrid search over one snapshot: the lanes ranked and fused, and the answers built from them. Imports index/ and below."""
