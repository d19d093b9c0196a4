"""Code that question pages present as working: included into the pages with pymdownx.snippets and run
by the tests."""
