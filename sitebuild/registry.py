"""The question registry: front matter of every question page, validated against the site's taxonomy.

Pure Python (PyYAML only), so the page contract can be tested without MkDocs. The MkDocs hooks
(:mod:`sitebuild.hooks`) and the site macros (:mod:`sitebuild.pages`) call :func:`load_site`; both get
the same validated view.

A question page is any Markdown file under ``docs/<part dir>/<section dir>/`` other than ``index.md``.
"""

from __future__ import annotations

import datetime

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .contract import key_points_problems, sources_problems
from .factcheck import PENDING_FILE as FACTS_PENDING_FILE
from .factcheck import SNAPSHOT_DIR as FACTS_DIR
from .factcheck import check_page as check_facts
from .factcheck import pending_paths as facts_pending_paths
from .typed_numbers import find_typed_numbers

HERE = Path(__file__).resolve().parent
TAXONOMY_FILE = HERE / "taxonomy.yml"
TAGS_FILE = HERE / "tags.yml"

DESCRIPTION_MAX = 160
TAGS_MIN, TAGS_MAX = 2, 5
REQUIRED_FIELDS = ("id", "title", "description", "difficulty", "tags", "related", "key_points", "verified")
FIRST_VERIFIED = datetime.date(2025, 1, 1)  # no page of this bank was checked before this date
# Front-matter keys a question page may carry besides the required ones and its section field.
OPTIONAL_FIELDS = {"nav_title", "search", "hide", "render_macros"}

# libyaml's parser when PyYAML has it (same results as SafeLoader, several times faster).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


class SiteError(ValueError):
    """One or more pages break the page contract. ``problems`` lists each as 'file: field: what'."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("page contract violated:\n  " + "\n  ".join(problems))


@dataclass(frozen=True)
class Section:
    key: Any
    title: str
    dir: str
    part: "Part" = field(repr=False, compare=False)

    @property
    def path(self) -> str:
        """Folder of this section relative to docs/."""
        return f"{self.part.dir}/{self.dir}"

    @property
    def label(self) -> str:
        if self.part.section_field == "module":
            return f"Module {self.key}: {self.title}"
        return self.title


@dataclass(frozen=True)
class Part:
    key: str
    title: str
    dir: str
    section_field: str
    summary: str
    ids: tuple[int, int] = (0, 0)  # first and last id the manifest gives this part
    sections: tuple[Section, ...] = ()

    @property
    def planned(self) -> int:
        """How many questions the manifest plans for this part."""
        return self.ids[1] - self.ids[0] + 1


@dataclass(frozen=True)
class Question:
    id: int
    title: str
    description: str
    difficulty: str
    tags: tuple[str, ...]
    related: tuple[int, ...]
    section: Section
    src: str  # path relative to docs/, with forward slashes
    nav_title: str | None = None
    key_points: tuple[str, ...] = ()
    verified: datetime.date | None = None  # when a second reader last checked the page against its sources

    @property
    def label(self) -> str:
        return f"Q{self.id}"

    @property
    def link(self) -> str:
        """Docs-absolute Markdown link target; MkDocs validates it and rewrites it relative."""
        return "/" + self.src


@dataclass
class Site:
    parts: tuple[Part, ...]
    tags: dict[str, str]
    difficulties: dict[str, str]
    questions: dict[int, Question]  # by id, sorted
    by_src: dict[str, Question]

    def section_questions(self, section: Section) -> list[Question]:
        return [q for q in self.questions.values() if q.section is section]

    def section_for_dir(self, rel_dir: str) -> Section | None:
        for part in self.parts:
            for sec in part.sections:
                if sec.path == rel_dir:
                    return sec
        return None

    def part_for_dir(self, rel_dir: str) -> Part | None:
        return next((p for p in self.parts if p.dir == rel_dir), None)

    def questions_with_tag(self, tag: str) -> list[Question]:
        return [q for q in self.questions.values() if tag in q.tags]


def split_front_matter(text: str) -> tuple[dict, str]:
    """Return (front matter mapping, body). A page without front matter yields ({}, text)."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    data = yaml.load(m.group(1), Loader=_YAML_LOADER) or {}  # noqa: S506 - a safe loader
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data, text[m.end():]


def load_taxonomy() -> tuple[tuple[Part, ...], dict[str, str], dict[str, str]]:
    raw = yaml.load(TAXONOMY_FILE.read_text(encoding="utf-8"), Loader=_YAML_LOADER)  # noqa: S506 - safe
    tags = yaml.load(TAGS_FILE.read_text(encoding="utf-8"), Loader=_YAML_LOADER)  # noqa: S506 - safe
    parts = []
    for p in raw["parts"]:
        part = Part(p["key"], p["title"], p["dir"], p["section_field"], p["summary"], tuple(p["ids"]))
        secs = tuple(Section(s["key"], s["title"], s["dir"], part) for s in p["sections"])
        object.__setattr__(part, "sections", secs)
        parts.append(part)
    return tuple(parts), dict(tags), dict(raw["difficulties"])


def _is_question_src(rel: str, parts: tuple[Part, ...]) -> bool:
    bits = rel.split("/")
    return len(bits) == 3 and bits[2] != "index.md" and any(bits[0] == p.dir for p in parts)


_CACHE: dict = {}


def _signature(docs: Path) -> tuple:
    """What load_site's result depends on: every Markdown file's path, size and mtime, and the taxonomy."""
    files = sorted(docs.rglob("*.md"))
    stats = tuple((p.as_posix(), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    watched = (TAXONOMY_FILE, TAGS_FILE, FACTS_PENDING_FILE, *sorted(FACTS_DIR.glob("*.json")))
    extra = tuple((p.stat().st_mtime_ns, p.stat().st_size) if p.exists() else None for p in watched)
    return stats + extra


def load_site(docs_dir: str | Path) -> Site:
    """Read and validate the front matter of every question page under ``docs_dir``.

    Raises :class:`SiteError` listing every problem found (not only the first), each naming the file
    and the field. The result is reused while no Markdown file under ``docs_dir`` (nor the taxonomy)
    has changed, so the build hook and the macros share one read per build.
    """
    docs = Path(docs_dir).resolve()
    key = (docs, _signature(docs))
    if _CACHE.get("key") != key:
        _CACHE["key"], _CACHE["site"] = key, _load_site(docs)
    return _CACHE["site"]


def _load_site(docs: Path) -> Site:
    parts, tags, difficulties = load_taxonomy()
    problems: list[str] = []
    pending: list[tuple[str, dict]] = []
    facts_pending = facts_pending_paths()

    for path in sorted(docs.rglob("*.md")):
        rel = path.relative_to(docs).as_posix()
        text = path.read_text(encoding="utf-8")
        try:
            meta, body = split_front_matter(text)
        except (ValueError, yaml.YAMLError) as exc:
            problems.append(f"docs/{rel}: front matter: not valid YAML ({exc})".replace("\n", " "))
            continue
        if _is_question_src(rel, parts):
            pending.append((rel, meta))
            offset = text[: len(text) - len(body)].count("\n")
            problems.extend(f"docs/{rel}: Sources: {what}" for what in sources_problems(body))
            for hit in find_typed_numbers(body):
                problems.append(f"docs/{rel}:{hit.line + offset}: typed number {hit.text!r}: sizing, speed "
                                "and cost figures come from a macro (allowlist: sitebuild/typed_numbers.py)")
            if rel not in facts_pending:
                for f in check_facts(body):
                    problems.append(f"docs/{rel}:{f.line + offset}: {f.name}: {f.message}; quote the reference "
                                    "release's name, or name the older release the sentence holds for "
                                    "(\"removed in 0.2x\")")
        elif "id" in meta and rel.split("/")[0] != "q":
            problems.append(
                f"docs/{rel}: id: a page with a question id must live in a section folder "
                f"(docs/<part>/<section>/<page>.md)")

    questions: dict[int, Question] = {}
    first_src: dict[int, str] = {}
    for rel, meta in pending:
        q = _validate(rel, meta, parts, tags, difficulties, problems)
        if q is None:
            continue
        if q.id in first_src:
            problems.append(f"docs/{rel}: id: duplicate id {q.id}, already used by docs/{first_src[q.id]}")
            continue
        first_src[q.id] = rel
        questions[q.id] = q

    # A page that exists but failed validation is not *also* reported as a dangling `related` target.
    present = {m["id"] for _, m in pending if type(m.get("id")) is int}
    for q in questions.values():
        for rid in q.related:
            if rid == q.id:
                problems.append(f"docs/{q.src}: related: a page cannot be related to itself ({rid})")
            elif rid not in present:
                problems.append(f"docs/{q.src}: related: id {rid} does not exist")

    if problems:
        raise SiteError(problems)
    ordered = dict(sorted(questions.items()))
    return Site(parts, tags, difficulties, ordered, {q.src: q for q in ordered.values()})


def _validate(rel, meta, parts, tags, difficulties, problems) -> Question | None:
    where = f"docs/{rel}"
    before = len(problems)

    def bad(fieldname: str, what: str) -> None:
        problems.append(f"{where}: {fieldname}: {what}")

    part_dir, sec_dir, _ = rel.split("/")
    part = next(p for p in parts if p.dir == part_dir)
    section = next((s for s in part.sections if s.dir == sec_dir), None)
    if section is None:
        bad(part.section_field, f"folder '{part_dir}/{sec_dir}' is not a section of part '{part.title}' "
            f"(sections: {', '.join(s.dir for s in part.sections)})")

    for name in REQUIRED_FIELDS + (part.section_field,):
        if name not in meta or meta[name] is None or meta[name] == "":
            bad(name, "required field is missing")
    other = "theme" if part.section_field == "module" else "module"
    allowed = set(REQUIRED_FIELDS) | OPTIONAL_FIELDS | {part.section_field}
    for name in meta:
        if name == other:
            bad(name, f"pages in '{part.title}' use '{part.section_field}', not '{other}'")
        elif name not in allowed:
            bad(name, f"unknown field (allowed: {', '.join(sorted(allowed))})")

    qid = meta.get("id")
    if "id" in meta and (not isinstance(qid, int) or isinstance(qid, bool) or qid < 1):
        bad("id", f"must be a positive integer, got {qid!r}")
    if isinstance(qid, int) and not isinstance(qid, bool) and not part.ids[0] <= qid <= part.ids[1]:
        bad("id", f"{qid} is not an id of '{part.title}' (its ids are {part.ids[0]} to {part.ids[1]})")
    title = meta.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        bad("title", "must be a non-empty string")
    desc = meta.get("description")
    if desc is not None:
        if not isinstance(desc, str) or not desc.strip():
            bad("description", "must be a non-empty string")
        elif len(desc) > DESCRIPTION_MAX:
            bad("description", f"{len(desc)} characters; at most {DESCRIPTION_MAX}")
    sec_value = meta.get(part.section_field)
    if section is not None and sec_value is not None and sec_value != section.key:
        bad(part.section_field, f"{sec_value!r} does not match the page's folder "
            f"'{part_dir}/{sec_dir}', which is {part.section_field} {section.key!r}")
    diff = meta.get("difficulty")
    if diff is not None and diff not in difficulties:
        bad("difficulty", f"unknown difficulty {diff!r} (allowed: {', '.join(difficulties)})")

    page_tags = meta.get("tags")
    if page_tags is not None:
        if not isinstance(page_tags, list) or not all(isinstance(t, str) for t in page_tags):
            bad("tags", "must be a list of strings")
        else:
            for t in page_tags:
                if t not in tags:
                    bad("tags", f"unknown tag {t!r} (the vocabulary is in sitebuild/tags.yml)")
            if len(set(page_tags)) != len(page_tags):
                bad("tags", "a tag is listed twice")
            if not TAGS_MIN <= len(page_tags) <= TAGS_MAX:
                bad("tags", f"{len(page_tags)} tags; a question carries {TAGS_MIN} to {TAGS_MAX}")

    related = meta.get("related")
    if related is not None:
        if not isinstance(related, list) or not all(
                isinstance(r, int) and not isinstance(r, bool) for r in related):
            bad("related", f"must be a list of question ids (integers), got {related!r}")
        elif len(set(related)) != len(related):
            bad("related", "an id is listed twice")

    nav_title = meta.get("nav_title")
    if nav_title is not None and (not isinstance(nav_title, str) or not nav_title.strip()):
        bad("nav_title", "must be a non-empty string when given")

    points = meta.get("key_points")
    if points is not None:
        for what in key_points_problems(points):
            bad("key_points", what)

    verified = meta.get("verified")
    if verified is not None and verified != "":
        if not isinstance(verified, datetime.date) or isinstance(verified, datetime.datetime):
            bad("verified", f"must be a date written YYYY-MM-DD, got {verified!r}")
        elif not FIRST_VERIFIED <= verified <= datetime.date.today():
            bad("verified", f"{verified} is not between {FIRST_VERIFIED} and today")

    if len(problems) > before:
        return None
    return Question(qid, title.strip(), desc.strip(), diff, tuple(page_tags), tuple(related),
                    section, rel, nav_title, tuple(p.strip() for p in points or ()), verified)
