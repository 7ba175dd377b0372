"""Console scripts: ``placement-api`` (development server), ``placement-manage``."""
