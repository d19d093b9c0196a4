"""Module 6 (monitoring): the per-request structured log record of an LLM gateway (Q60)."""
