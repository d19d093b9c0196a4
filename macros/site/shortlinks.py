"""Short links (``/q/<id>/``) and the "copy link" buttons that hand them out.

Every question gets two tiny redirect pages generated from its front-matter id: ``q/<id>/index.html``
(for ``/q/75/`` on a web server) and ``q/<id>.html`` (for the offline bundle, which uses file names).
Both keep the ``#fragment``, so ``/q/75/#fu-naive-formula`` lands on that follow-up.
"""

from __future__ import annotations

import html as _html
import json
import re

SHORT_LINK_DIR = "q"


def short_link_url(site_url: str | None, qid: int) -> str:
    """The absolute short link people paste into chat (relative if no site_url is configured)."""
    base = (site_url or "/").rstrip("/") + "/"
    return f"{base}{SHORT_LINK_DIR}/{qid}/"


def _redirect_page(target: str, canonical: str | None) -> str:
    t = _html.escape(target, quote=True)
    js_target = json.dumps(target)
    canon = f'<link rel="canonical" href="{_html.escape(canonical, quote=True)}">' if canonical else ""
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>Redirecting…</title><meta name=\"robots\" content=\"noindex\">"
        f"{canon}<meta http-equiv=\"refresh\" content=\"0; url={t}\">"
        f"<script>location.replace({js_target} + location.hash)</script>"
        f"</head><body><p><a href=\"{t}\">Go to the question</a></p></body></html>\n"
    )


def short_link_pages(qid: int, page_url: str, site_url: str | None) -> dict[str, str]:
    """Redirect pages for question ``qid`` whose page lives at site-relative ``page_url``.

    Returns {path relative to the site dir: HTML}.
    """
    canonical = (site_url.rstrip("/") + "/" + page_url) if site_url else None
    return {
        f"{SHORT_LINK_DIR}/{qid}/index.html": _redirect_page("../../" + page_url, canonical),
        f"{SHORT_LINK_DIR}/{qid}.html": _redirect_page("../" + page_url, canonical),
    }


_BUTTON = ('<button type="button" class="msib-copy-link" data-clipboard-text="{url}" '
           'title="Copy link{what}" aria-label="Copy link{what}">{icon}</button>')
_H1_END = re.compile(r"(<h1\b[^>]*>.*?)(</h1>)", re.S)
_FOLLOWUP_SUMMARY = re.compile(
    r'(<details class="followup" id="(fu-[a-z0-9-]+)"[^>]*>\s*<summary>)(.*?)(</summary>)', re.S)


def add_copy_link_buttons(page_html: str, short_url: str, icon_svg: str = "") -> str:
    """Add a copy-link button to the question heading and to each follow-up's summary.

    Material's clipboard integration copies any element's ``data-clipboard-text`` and shows its
    "Copied to clipboard" notice; site.js keeps a click on the button from toggling the follow-up.
    """
    out = _H1_END.sub(lambda m: m.group(1) + _BUTTON.format(url=short_url, what=" to this question", icon=icon_svg)
                      + m.group(2), page_html, count=1)
    return _FOLLOWUP_SUMMARY.sub(
        lambda m: m.group(1) + m.group(3) + _BUTTON.format(url=f"{short_url}#{m.group(2)}",
                                                           what=" to this follow-up", icon=icon_svg) + m.group(4), out)
