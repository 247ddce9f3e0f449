"""The news spider."""
