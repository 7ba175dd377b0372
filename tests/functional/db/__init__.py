"""Schema migration tests."""
