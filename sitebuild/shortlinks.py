"""Short links (``/q/<id>/``) and the "copy link" buttons that hand them out.

Every question gets two tiny redirect pages generated from its front-matter id: ``q/<id>/index.html``
(for ``/q/75/`` on a web server) and ``q/<id>.html`` (for the offline bundle, which uses file names).
Both keep the ``#fragment``, so ``/q/75/#fu-naive-formula`` lands on that follow-up.

They are written after the build into the built site, by the MkDocs hooks or, under a builder that
runs no hooks, by ``python -m sitebuild.shortlinks SITE_DIR --site-url URL [--file-urls]``.
"""

from __future__ import annotations

import argparse
import html as _html
import json
import re
from collections.abc import Callable
from pathlib import Path

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


def page_url(src: str, directory_urls: bool = True) -> str:
    """Where the MkDocs family of builders puts docs/``src``, relative to the site: ``a/b.md`` at
    ``a/b/`` (``a/b.html`` with file URLs), ``a/index.md`` at ``a/`` (``a/index.html``)."""
    if not src.endswith(".md"):
        raise ValueError(f"{src}: not a Markdown page")
    stem = src[:-3]
    if not directory_urls:
        return stem + ".html"
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def write_short_links(site_dir: Path, questions, site_url: str | None, url_of: Callable) -> int:
    """Write every question's short-link pages into the built site at ``site_dir``; ``url_of(q)`` is
    where the question's page was written. Returns the number of files written."""
    written = 0
    for q in questions:
        for rel, page in short_link_pages(q.id, url_of(q), site_url, q.title, q.description).items():
            out = Path(site_dir) / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(page, encoding="utf-8")
            written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    from .registry import SiteError, load_site
    ap = argparse.ArgumentParser(prog="python -m sitebuild.shortlinks",
                                 description="write the short-link pages into a built site")
    ap.add_argument("site_dir", type=Path, help="the built site")
    ap.add_argument("--docs", type=Path, default=Path(__file__).resolve().parent.parent / "docs")
    ap.add_argument("--site-url", default=None, help="the public address (canonical and og:url tags)")
    ap.add_argument("--file-urls", action="store_true", help="the site was built with use_directory_urls off")
    args = ap.parse_args(argv)
    if not args.site_dir.is_dir():
        ap.error(f"{args.site_dir}: no such directory (build the site first)")
    try:
        site = load_site(args.docs)
    except SiteError as exc:
        print(f"error: {exc}")
        return 1
    n = write_short_links(args.site_dir, site.questions.values(), args.site_url,
                          lambda q: page_url(q.src, not args.file_urls))
    print(f"wrote {n} short-link pages under {args.site_dir / SHORT_LINK_DIR}")
    return 0


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


if __name__ == "__main__":
    raise SystemExit(main())
