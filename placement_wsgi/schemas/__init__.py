"""JSON Schemas for request bodies and query strings, one per version range."""
