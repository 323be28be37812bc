"""Helpers to build real, tiny models locally (no downloads) for tests, benchmarks and demos."""
