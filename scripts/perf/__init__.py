"""Helpers of scripts/benchmark: page weight, build timing, a gzip static server and Lighthouse.

Importable from the tests (``pytest`` runs with the repository root on ``sys.path``); nothing here
imports MkDocs at module level, so ``weight`` can be used on any built site.
"""
