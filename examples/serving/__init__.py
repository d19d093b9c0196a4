"""Module 4 (serving): graceful shutdown (Q40) and token-based admission limits (Q36)."""
