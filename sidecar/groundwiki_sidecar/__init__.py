"""The search sidecar: indexes of the wiki kept in step with the files, and the answers to agents.

Layers look down only: store, lexical and vectors hold data; sync keeps them current from the
compiler core; the service runs sync, the watcher and the embedder; the app serves them.
"""
