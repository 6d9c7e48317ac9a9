"""Helpers of the reliability tests (`tests/test_reliability_*.py`, docs/reliability.md)."""
