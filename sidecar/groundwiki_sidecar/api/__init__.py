"""The sidecar's surfaces: the operations catalogue, HTTP, MCP, identity, audit and the running service. Imports search/ and below."""
