"""Files on disk: caches of what was read, safe writes, and when workers may fork. Imports only config/."""
