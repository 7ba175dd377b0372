"""Console script tests."""
