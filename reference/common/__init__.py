"""Pieces shared by every family: checkpoint reading, layers, deterministic randomness."""
