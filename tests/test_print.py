"""The numbers-to-know sheet prints on two A4 pages (Chromium's print engine through Playwright)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser


def pdf_page_count(pdf: bytes) -> int:
    """Page objects in a PDF (``/Type /Page``, not ``/Pages``): Chromium writes one per printed page."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def test_page_count_of_a_known_pdf_is_read():
    one = b"%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R] /Count 1 >> endobj\n2 0 obj << /Type /Page >> endobj"
    assert pdf_page_count(one) == 1
    assert pdf_page_count(one + b"\n3 0 obj <</Type/Page>> endobj") == 2


def test_numbers_page_prints_on_two_a4_pages(page, served_site):
    page.goto(served_site + "reference/numbers/")
    assert page.locator("table").count() == 3
    pdf = page.pdf(format="A4", print_background=True)
    n = pdf_page_count(pdf)
    assert 1 <= n <= 2, f"reference/numbers.md prints on {n} A4 pages; the budget is 2"
