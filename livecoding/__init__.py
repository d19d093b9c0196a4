"""Reference implementations for the live-coding questions (Module 10, Q89-Q94; Part C, Q152).

Each module answers one question, uses only the standard library, and is included into its page
with pymdownx.snippets, so the code a reader sees is the code the test suite runs.

| Question | Module |
|---|---|
| Q89 batch aggregation | :mod:`livecoding.batch_aggregator` |
| Q90 fixed-capacity FIFO queue | :mod:`livecoding.bounded_queue` |
| Q91 sliding-window P99 | :mod:`livecoding.sliding_p99` |
| Q92 time-boxed batching | :mod:`livecoding.timed_batcher` |
| Q93 token bucket | :mod:`livecoding.token_bucket` |
| Q94 generate wrapper with concurrency control | :mod:`livecoding.generate_wrapper` |
| Q152 prefix-aware router | :mod:`livecoding.prefix_router` |
"""
