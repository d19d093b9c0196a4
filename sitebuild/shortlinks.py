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


def _redirect_page(target: str, canonical: str | None, title: str, description: str) -> str:
    """A redirect page that also previews well when its link is pasted in chat: the question's title,
    description and canonical address (Open Graph and Twitter tags), not "Redirecting…"."""
    t = _html.escape(target, quote=True)
    js_target = json.dumps(target)
    ti, de = _html.escape(title, quote=True), _html.escape(description, quote=True)
    meta = (f'<meta name="description" content="{de}"><meta property="og:type" content="article">'
            f'<meta property="og:title" content="{ti}"><meta property="og:description" content="{de}">'
            f'<meta name="twitter:card" content="summary"><meta name="twitter:title" content="{ti}">'
            f'<meta name="twitter:description" content="{de}">')
    if canonical:
        c = _html.escape(canonical, quote=True)
        meta += f'<link rel="canonical" href="{c}"><meta property="og:url" content="{c}">'
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{ti}</title><meta name=\"robots\" content=\"noindex\">"
        f"{meta}<meta http-equiv=\"refresh\" content=\"0; url={t}\">"
        f"<script>location.replace({js_target} + location.hash)</script>"
        f"</head><body><p><a href=\"{t}\">{ti}</a></p></body></html>\n"
    )


def short_link_pages(qid: int, page_url: str, site_url: str | None, title: str = "",
                     description: str = "") -> dict[str, str]:
    """Redirect pages for question ``qid`` whose page lives at site-relative ``page_url``, carrying
    the question's ``title`` and ``description`` as link-preview tags.

    Returns {path relative to the site dir: HTML}.
    """
    canonical = (site_url.rstrip("/") + "/" + page_url) if site_url else None
    title = title or f"Question {qid}"
    return {
        f"{SHORT_LINK_DIR}/{qid}/index.html": _redirect_page("../../" + page_url, canonical, title, description),
        f"{SHORT_LINK_DIR}/{qid}.html": _redirect_page("../" + page_url, canonical, title, description),
    }


_BUTTON = ('<button type="button" class="msib-copy-link{cls}" data-clipboard-text="{url}" '
           'title="Copy link{what}" aria-label="Copy link{what}">{icon}</button>')
_H1_END = re.compile(r"(<h1\b[^>]*>.*?)(</h1>)", re.S)
_FOLLOWUP = re.compile(r'<details class="followup" id="(fu-[a-z0-9-]+)"')


_ICON_ID = "msib-link-icon"


def icon_symbol(icon_svg: str) -> tuple[str, str]:
    """(a hidden <svg> defining the icon once per page, the markup each button uses to show it)."""
    m = re.match(r"\s*<svg\b([^>]*)>(.*)</svg>\s*$", icon_svg, re.S)
    if not m:
        return "", icon_svg
    view_box = re.search(r'viewBox="([^"]*)"', m.group(1))
    vb = f' viewBox="{view_box.group(1)}"' if view_box else ""
    # Not `hidden`: browsers do not apply it to <svg>, which would then take its default 300x150 box.
    symbol = (f'<svg xmlns="http://www.w3.org/2000/svg" class="msib-icon-defs" width="0" height="0" aria-hidden="true">'
              f'<symbol id="{_ICON_ID}"{vb}>{m.group(2)}</symbol></svg>')
    return symbol, f'<svg aria-hidden="true"><use href="#{_ICON_ID}"></use></svg>'


def add_copy_link_buttons(page_html: str, short_url: str, icon_svg: str = "") -> str:
    """Add a copy-link button to the question heading and one beside each follow-up.

    Material's clipboard integration copies any element's ``data-clipboard-text`` and shows its
    "Copied to clipboard" notice. A follow-up's button sits just before its ``<details>`` (a button
    inside ``<summary>`` would be an interactive element nested in another); CSS places it on the
    summary's row.

    When the short link's host is local (no public ``site_url``: 127.0.0.1, localhost), the site script
    copies the address the reader is on instead (the page, plus the follow-up's anchor).
    """
    symbol, use = icon_symbol(icon_svg)

    def button(url: str, what: str, cls: str = "") -> str:
        return _BUTTON.format(url=url, what=what, icon=use, cls=cls)

    out = _H1_END.sub(lambda m: m.group(1) + button(short_url, " to this question") + m.group(2),
                      symbol + page_html, count=1)
    return _FOLLOWUP.sub(lambda m: button(f"{short_url}#{m.group(1)}", " to this follow-up",
                                          " msib-copy-link--followup") + m.group(0), out)
