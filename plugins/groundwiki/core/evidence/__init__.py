"""Citations and the evidence they cover: the hash lock, drift and quoting. Imports the layers below it (config/ to read/)."""
