"""Session memory (seed 000): recall, store context, user facts, personas."""
