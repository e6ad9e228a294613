"""The search sidecar: indexes of the wiki kept in step with the files, and the answers to agents.

Its folders look down only, bottom to top: lanes/ (what a lane is and ranks), base/ (settings,
health), embedding/, index/ (Whoosh, Chroma and the state kept current from the compiler core),
search/ (the lanes fused), api/ (HTTP, MCP and the running service), evaluation/. It imports the
compiler core, never the MkDocs plugin or the command line.
"""
