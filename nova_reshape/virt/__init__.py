"""Virt drivers and device shims: what a compute host reports to Placement."""
