"""Cyborg accelerators from nova's side: device profiles, request groups and ARQs."""
