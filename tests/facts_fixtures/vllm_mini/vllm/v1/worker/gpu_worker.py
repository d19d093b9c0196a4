import logging

logger = logging.getLogger(__name__)


def load(gib, secs):
    logger.info("Model loading took %.4f GiB and %.6f seconds", gib, secs)
    logger.info("Available KV cache memory: " "%.2f GiB", gib)
    logger.debug("This debug line is not kept at all")
    logger.warning(f"GPU KV cache size: {gib} tokens")
    logger.info("short")
