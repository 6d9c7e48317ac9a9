"""Cross-seam byte parity: the seeded state and the cases every operation must have."""
