import logging

logger = logging.getLogger(__name__)


def start(n):
    logger.info(f"max_total_num_tokens={n}, chunked_prefill_size={n}")
