"""Reading one page file: frontmatter, Markdown structure, comments, summary, lead and provenance. Imports config/, files/, model/ and sources/."""
