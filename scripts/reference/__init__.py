"""Helpers of scripts/gen_reference.py: one module per generated page of docs/reference/."""
