"""Module 7 (MLOps) examples."""
