"""A page body's Markdown rewritten for the site: Obsidian syntax, code spans, slots of finished HTML. Imports config/ to links/: it stands below wiki/, as the compile cache stores its slots."""
