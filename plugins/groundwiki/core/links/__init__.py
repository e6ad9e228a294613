"""Link resolution as Obsidian does it, and where a link's anchor lands. Imports the layers below it (config/ to evidence/)."""
