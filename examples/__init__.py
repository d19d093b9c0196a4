"""Example code that question pages include and the test suite runs."""
