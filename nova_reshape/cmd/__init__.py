"""Command-line entry points of the compute side."""
