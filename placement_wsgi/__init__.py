"""A Placement-compatible WSGI service (OpenStack Placement API 1.0-1.39)."""
