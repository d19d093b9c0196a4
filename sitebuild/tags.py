"""The order of questions on the tags page, set in mkdocs.yml through the tags plugin's
``listings_sort_by`` option (``!!python/name:sitebuild.tags.listing_order``)."""

from __future__ import annotations


def listing_order(mapping):
    """Sort key of a page on the tags page: question id (Q2 before Q18), then title for pages without one."""
    qid = mapping.item.meta.get("id")
    return (0, qid, "") if isinstance(qid, int) else (1, 0, str(mapping.item.title))
