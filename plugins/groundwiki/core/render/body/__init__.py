"""A page body's Markdown rewritten for the site: Obsidian syntax, code spans, slots of finished HTML. Imports the core below render/."""
