"""Elastic Reasoning (E1)."""
