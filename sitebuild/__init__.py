"""The site's MkDocs-facing mechanics: the question registry and page contract, the generated
navigation, short links and copy-link buttons, the rendered-structure check, the typed-number check,
and the site macros (lists generated from the registry).

Modules:

- :mod:`.registry`       question pages' front matter, validated against ``taxonomy.yml`` and ``tags.yml``
- :mod:`.contract`       key points, the Sources section, the "In short" and common-mistakes rewrites
- :mod:`.typed_numbers`  the check that no sizing figure is typed by hand
- :mod:`.structure`      the rendered page's answer and follow-up blocks
- :mod:`.nav`            the generated question navigation
- :mod:`.shortlinks`     ``/q/<id>/`` redirect pages and the copy-link buttons
- :mod:`.tags`           the order of questions on the tags page
- :mod:`.pages`          site macros: section and part indexes, checklists, the tag vocabulary
- :mod:`.hooks`          the MkDocs hooks that connect the above to a build (the only module here that
  imports MkDocs)

Everything but :mod:`.hooks` is pure Python and tested without MkDocs. The sizing macros, which
render numbers, live in :mod:`macros`.
"""

from __future__ import annotations

from .contract import collapse_mistakes, insert_key_points, sources_section, split_sources
from .nav import build_nav
from .registry import V2_PENDING_FILE, Question, Site, SiteError, load_site, load_taxonomy

__all__ = ["V2_PENDING_FILE", "Question", "Site", "SiteError", "build_nav", "collapse_mistakes",
           "insert_key_points", "load_site", "load_taxonomy", "sources_section", "split_sources"]
