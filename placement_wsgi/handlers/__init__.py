"""The HTTP layer: one module per resource. Handlers parse and format only."""
