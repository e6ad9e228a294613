"""The in-memory model of a compiled wiki, its scopes and where each thing lands in the site. Imports config/ and files/."""
