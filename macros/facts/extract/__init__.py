"""Extractors: read an engine release's unpacked source statically and return its facts."""
