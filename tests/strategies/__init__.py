"""Reusable input generators for tests and benchmarks (hypothesis strategies and seeded twins)."""
