"""Compute-host side: the resource tracker's Placement update (and reshape) flow."""
