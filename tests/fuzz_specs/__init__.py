"""Fuzz specifications, one module per library module (see tests/fuzzing.py)."""
