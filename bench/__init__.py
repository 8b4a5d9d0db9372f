"""Benchmarks: run on demand (``make bench``), never as timed tests."""
