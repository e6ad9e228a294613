"""Compiling a wiki into one model: every page and source, the link graph, git renames, transclusion. Imports the layers below it."""
