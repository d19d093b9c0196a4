"""Practice mode in headless Chromium, on the online build (HTTP) and the offline bundle (file://).

The clock is Playwright's (page.clock), the question order comes from a fixed seed in the URL
(#seed=N), and the expected order is computed here by an independent Python port of the page's
generator, so the tests say which questions must appear, not only that some did.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from sitekit import recording_page

pytestmark = pytest.mark.browser

KEY = "msib.progress"
T0 = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.timezone.utc)
DAY = dt.timedelta(days=1)


def mulberry32(seed: int):
    """The page's seeded generator (practice.js), ported: 32-bit arithmetic done modulo 2**32."""
    state = seed & 0xFFFFFFFF

    def imul(a: int, b: int) -> int:
        return (a * b) & 0xFFFFFFFF

    def draw() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        t = state
        t = imul(t ^ (t >> 15), t | 1)
        t ^= (t + imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    return draw


def seeded_order(ids: list[int], seed: int) -> list[int]:
    rand, out = mulberry32(seed), list(ids)
    for i in range(len(out) - 1, 0, -1):
        j = int(rand() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


@pytest.fixture(params=["online", "offline"])
def where(request, served_site, offline_site):
    """(mode, URL of a docs page by its source path)."""
    if request.param == "online":
        def url(src):
            return served_site + (src[:-8] if src.endswith("index.md") else src[:-3] + "/")
        return "online", url
    root = offline_site.as_uri() + "/"
    return "offline", lambda src: root + src[:-3] + ".html"


@pytest.fixture
def ctx(browser):
    """A fresh context (empty storage) in UTC, so that dates are the same wherever the tests run."""
    contexts = []

    def make(scheme: str = "light"):
        context, pg = recording_page(browser, scheme)
        contexts.append(context)
        pg.errors = []
        pg.on("pageerror", lambda e: pg.errors.append(str(e)))
        return pg

    yield make
    for c in contexts:
        c.close()


def gradable(registry):
    return [q for q in registry.questions.values() if q.key_points]


def set_clock(pg, when):
    """Run the context's clock from ``when`` (Playwright's clock belongs to the browser context)."""
    if not getattr(pg.context, "msib_clock", False):
        pg.clock.install(time=when)
        pg.context.msib_clock = True
    else:
        pg.clock.resume()
        pg.clock.set_system_time(when)


def open_practice(pg, url, when=T0, hash_="", pause=False):
    """Open the practice page at ``when``; with ``pause`` the clock then moves only by run_for()."""
    set_clock(pg, when)
    pg.goto(url("practice.md") + hash_)
    pg.wait_for_selector("#msib-q-title" if hash_.startswith("#q=") else "#msib-start")
    if pause:
        pg.clock.pause_at(pg.evaluate("Date.now()") + 1000)


def stored(pg):
    raw = pg.evaluate(f"localStorage.getItem({KEY!r})")
    return None if raw is None else json.loads(raw)


def answer_current(pg, tick: int):
    """Reveal, tick the first ``tick`` key points, move on; returns (question id, points total)."""
    qid = int(re.match(r"Q(\d+) ", pg.inner_text("#msib-q-title")).group(1))
    pg.click("#msib-reveal")
    boxes = pg.locator("#msib-points input[type=checkbox]")
    for i in range(tick):
        boxes.nth(i).check()
    total = boxes.count()
    pg.click("#msib-next")
    return qid, total


def test_mock_interview_scope_timer_reveal_and_summary(where, ctx, registry):
    mode, url = where
    pool = [q for q in gradable(registry) if q.section.part.dir == "deployment"]
    assert len(pool) >= 3, "practice needs at least three questions with key points in Part A"
    pg = ctx()
    open_practice(pg, url, hash_="#seed=7", pause=True)
    pg.select_option("#msib-scope", "part:deployment")
    pg.fill("#msib-count", "3")
    pg.fill("#msib-minutes", "1")
    assert pg.inner_text("#msib-available") == f"{len(pool)} questions in this scope."
    pg.click("#msib-start")
    pg.wait_for_selector("#msib-q-title")
    expected = seeded_order([q.id for q in pool], 7)[:3]

    # Question 1: the countdown, pause and the polite announcements.
    first = registry.questions[expected[0]]
    assert pg.inner_text("#msib-q-title") == f"Q{first.id} · {first.title}"
    assert pg.inner_text("#msib-q-count").startswith("Question 1 of 3")
    assert pg.locator("#msib-points").count() == 0, "the key points show only after the reveal"
    pg.clock.run_for(30_000)
    assert pg.inner_text("#msib-timer") == "0:30"
    assert pg.inner_text("#msib-practice-live") == "Thirty seconds left."
    pg.click("#msib-pause")
    pg.clock.run_for(20_000)
    assert pg.inner_text("#msib-timer") == "0:30", "a paused clock must not run"
    pg.click("#msib-pause")
    pg.clock.run_for(35_000)
    assert pg.inner_text("#msib-timer") == "-0:05 over"
    assert pg.inner_text("#msib-practice-live") == "Time is up."
    qid, total1 = answer_current(pg, 2)
    assert qid == expected[0] and total1 == len(first.key_points)

    # Questions 2 and 3: answered at once, one fully covered.
    pg.clock.run_for(12_000)
    qid2, total2 = answer_current(pg, len(registry.questions[expected[1]].key_points))
    pg.clock.run_for(3_000)
    qid3, total3 = answer_current(pg, 0)
    assert [qid2, qid3] == expected[1:]

    rows = pg.locator("#msib-summary tbody tr")
    assert rows.count() == 3
    cells = [[rows.nth(r).locator("td").nth(c).inner_text() for c in range(4)] for r in range(3)]
    assert cells[0][1:3] == [f"2 of {total1}", "1:05"]
    assert cells[1][1:3] == [f"{total2} of {total2}", "0:12"]
    assert cells[2][1:3] == [f"0 of {total3}", "0:03"]
    covered, total = 2 + total2, total1 + total2 + total3
    assert pg.inner_text("#msib-summary-total") == f"Covered {covered} of {total} key points in 1:20."
    # The summary links to the full pages.
    rows.nth(1).locator("a").click()
    assert f"Q{qid2}" in pg.inner_text(".msib-meta")
    assert not pg.errors


def test_spaced_review_across_days(where, ctx, registry):
    mode, url = where
    q = gradable(registry)[0]
    n = len(q.key_points)
    pg = ctx()
    open_practice(pg, url, hash_=f"#q={q.id}")
    assert pg.inner_text("#msib-q-title").startswith(f"Q{q.id} ")
    answer_current(pg, n)                       # all covered: box 1 -> 2, due in 2 days
    entry = stored(pg)["questions"][str(q.id)]
    assert (entry["box"], entry["due"]) == (2, (T0 + 2 * DAY).date().isoformat())

    # The question page shows the state; on the due day it says so and the review list offers it.
    pg.goto(url(q.src))
    assert f"next review {(T0 + 2 * DAY).date().isoformat()} (box 2 of 5)" in pg.inner_text(".msib-meta")
    pg2 = pg.context.new_page()
    open_practice(pg2, url, when=T0 + 2 * DAY)
    pg2.click("#msib-due")
    assert pg2.inner_text("#msib-q-title").startswith(f"Q{q.id} ")
    answer_current(pg2, 0)                      # missed: back to box 1, due the next day
    entry = stored(pg2)["questions"][str(q.id)]
    assert (entry["box"], entry["due"]) == (1, (T0 + 3 * DAY).date().isoformat())
    assert [r["covered"] for r in entry["reviews"]] == [n, 0]
    pg2.goto(url(q.src))
    assert "next review" in pg2.inner_text(".msib-meta")

    pg3 = pg.context.new_page()
    set_clock(pg3, T0 + 3 * DAY)
    pg3.goto(url(q.src))
    assert "due for review today" in pg3.inner_text(".msib-meta")
    # Nothing is due the day before.
    pg4 = pg.context.new_page()
    open_practice(pg4, url, when=T0 + 2 * DAY)
    pg4.click("#msib-due")
    assert pg4.inner_text(".msib-practice-message") == "Nothing in this scope is due for review today."


def test_progress_survives_reload_and_moves_by_export_import(where, ctx, registry, tmp_path):
    mode, url = where
    q = gradable(registry)[0]
    pg = ctx()
    open_practice(pg, url, hash_=f"#q={q.id}")
    answer_current(pg, 1)
    pg.goto(url("guide/knowledge-map.md"))
    item = pg.locator("li.task-list-item", has=pg.locator(f"a:text-matches('^Q{q.id} ')")).first
    # The map's lists are laid out as they come into view (content-visibility): scroll there first,
    # as a reader does, then click where Material draws the box.
    item.scroll_into_view_if_needed()
    pg.wait_for_function("li => li.checkVisibility({contentVisibilityAuto: true})", arg=item.element_handle())
    item.locator("input").check(force=True)
    before = stored(pg)
    pg.reload()
    assert stored(pg) == before
    assert item.locator("input").is_checked(), "a tick must survive a reload"
    # Every copy of the question on the map is ticked together.
    copies = pg.locator("li.task-list-item", has=pg.locator(f"a:text-matches('^Q{q.id} ')"))
    assert all(copies.nth(i).locator("input").is_checked() for i in range(copies.count()))

    open_practice(pg, url)
    with pg.expect_download() as dl:
        pg.click("#msib-export")
    path = tmp_path / "progress.json"
    dl.value.save_as(path)
    exported = json.loads(path.read_text(encoding="utf-8"))
    assert exported["questions"] == before["questions"] and exported["ticked"] == before["ticked"] == [q.id]

    fresh = ctx()
    open_practice(fresh, url)
    fresh.set_input_files("#msib-import-file", str(path))
    fresh.wait_for_function("document.querySelector('.msib-practice-message').textContent.startsWith('Imported')")
    after = stored(fresh)
    assert {k: after[k] for k in ("format", "version", "questions", "ticked")} == \
        {k: before[k] for k in ("format", "version", "questions", "ticked")}
    fresh.goto(url(q.src))
    assert "next review" in fresh.inner_text(".msib-meta")


BAD_IMPORTS = {
    "not JSON": ("{this is not json", "it is not valid JSON"),
    "foreign JSON": ('{"name": "my notes", "items": [1, 2]}', "it is not a progress file from this site"),
    "newer version": ('{"format": "msib-progress", "version": 9, "questions": {}}', "written by a newer version"),
    "bad box": ('{"format": "msib-progress", "version": 2, "ticked": [], "questions": '
                '{"77": {"box": 9, "due": "2026-03-03", "reviews": []}}}', "question 77: box must be"),
    "markup as an id": ('{"format": "msib-progress", "version": 2, "ticked": [], "questions": '
                        '{"<img src=x onerror=alert(1)>": {"box": 1, "due": "2026-03-03", "reviews": []}}}',
                        "is not a question id"),
    "impossible date": ('{"format": "msib-progress", "version": 2, "ticked": [], "questions": '
                        '{"77": {"box": 1, "due": "2026-02-30", "reviews": []}}}', "due must be a date"),
}


@pytest.mark.parametrize("case", sorted(BAD_IMPORTS))
def test_bad_import_is_refused_and_changes_nothing(case, ctx, served_site, tmp_path):
    text, reason = BAD_IMPORTS[case]
    pg = ctx()
    pg.goto(served_site + "practice/")
    good = {"format": "msib-progress", "version": 2, "ticked": [3],
            "questions": {"2": {"box": 3, "due": "2026-03-05", "reviews": []}}}
    pg.evaluate(f"localStorage.setItem({KEY!r}, {json.dumps(json.dumps(good))})")
    pg.reload()
    path = tmp_path / "import.json"
    path.write_text(text, encoding="utf-8")
    pg.set_input_files("#msib-import-file", str(path))
    pg.wait_for_function("document.querySelector('.msib-practice-message').textContent.startsWith('Import refused')")
    msg = pg.inner_text(".msib-practice-message")
    assert reason in msg and msg.endswith("Your progress is unchanged."), msg
    assert stored(pg) == good
    assert pg.locator(".msib-practice img").count() == 0


def test_corrupt_storage_shows_a_message_and_a_reset(where, ctx, registry):
    mode, url = where
    pg = ctx()
    pg.goto(url("practice.md"))
    damaged = '{"format": "msib-progress", "version": 2, "questions": <script>alert(1)</script>'
    pg.evaluate(f"localStorage.setItem({KEY!r}, {json.dumps(damaged)})")
    q = gradable(registry)[0]
    pg.goto(url(q.src))
    assert "Saved progress is damaged" in pg.inner_text(".msib-meta")
    pg.goto(url("guide/knowledge-map.md"))
    pg.locator("li.task-list-item input").first.click(force=True)
    assert pg.evaluate(f"localStorage.getItem({KEY!r})") == damaged, "damaged data must not be overwritten"
    pg.goto(url("practice.md"))
    alert = pg.locator(".msib-alert[role=alert]")
    assert "cannot be read: it is not valid JSON" in alert.inner_text()
    assert pg.locator(".msib-practice script").count() == 0
    pg.click("text=Reset progress")
    assert stored(pg) == {"format": "msib-progress", "version": 3, "questions": {}, "ticked": [], "drills": {}}
    assert pg.locator(".msib-alert").count() == 0
    assert not pg.errors


def test_older_format_is_migrated_not_discarded(ctx, served_site, registry):
    ids = sorted(registry.questions)[:2]
    pg = ctx()
    pg.goto(served_site + "guide/knowledge-map/")
    old = {"format": "msib-progress", "version": 1, "ticked": ids}
    pg.evaluate(f"localStorage.setItem({KEY!r}, {json.dumps(json.dumps(old))})")
    pg.reload()
    for qid in ids:
        box = pg.locator("li.task-list-item", has=pg.locator(f"a:text-matches('^Q{qid} ')")).first.locator("input")
        assert box.is_checked()
    # The first write stores the current format with the old ticks kept.
    other = pg.locator("li.task-list-item", has=pg.locator("input:not(:checked)")).first
    other.locator("input").check(force=True)
    new = stored(pg)
    assert new["version"] == 3 and set(ids) <= set(new["ticked"]) and len(new["ticked"]) == 3 and new["drills"] == {}


def test_keyboard_only_mock_interview(ctx, served_site, registry):
    pg = ctx()
    open_practice(pg, lambda src: served_site + "practice/", hash_="#seed=3")
    pg.focus("#msib-count")
    pg.keyboard.press("Control+A")
    pg.keyboard.type("1")
    start = pg.locator("#msib-start")
    for _ in range(10):                       # Tab from the count field to the Start button
        pg.keyboard.press("Tab")
        if start.evaluate("el => el === document.activeElement"):
            break
    assert start.evaluate("el => el === document.activeElement")
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.id") == "msib-q-title"
    pg.keyboard.press("Tab")                  # Pause
    pg.keyboard.press("Enter")
    assert pg.inner_text("#msib-pause") == "Resume"
    pg.keyboard.press("Tab")                  # Reveal
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.id") == "msib-point-0"
    pg.keyboard.press("Space")
    assert pg.is_checked("#msib-point-0")
    next_button = pg.locator("#msib-next")
    for _ in range(20):
        pg.keyboard.press("Tab")
        if next_button.evaluate("el => el === document.activeElement"):
            break
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.id") == "msib-summary-h"
    assert pg.inner_text("#msib-summary tbody td:nth-child(2)").startswith("1 of ")


def test_follow_ups_come_one_at_a_time_with_answers_on_request(where, ctx, registry):
    mode, url = where
    q = max(gradable(registry), key=lambda q: q.id)
    pg = ctx()
    open_practice(pg, url, hash_=f"#q={q.id}")
    pg.click("#msib-reveal")
    assert pg.locator(".msib-followup").count() == 0
    pg.click("text=Ask the next follow-up")
    assert pg.locator(".msib-followup").count() == 1
    assert pg.locator(".msib-fu-answer").first.inner_text() == ""
    pg.locator(".msib-followup button", has_text="Show the answer").first.click()
    answer = pg.locator(".msib-fu-answer").first
    answer.locator("a").wait_for()
    assert len(answer.inner_text().split()) > 20, "the follow-up's own answer is shown"
    assert not pg.errors
    # No request left the site (the follow-up answers come from the site's own script).
    allowed = url("index.md").rsplit("/", 1)[0]
    assert all(r.startswith(allowed[:allowed.find("/", 8)]) or r.startswith(("data:", "blob:")) for r in pg.requests)


def test_hash_carries_data_only(ctx, served_site):
    pg = ctx()
    pg.goto(served_site + "practice/#q=<img%20src=x%20onerror=alert(1)>&seed=abc")
    pg.wait_for_selector("#msib-start")
    assert pg.locator("#msib-practice img").count() == 0
    assert pg.locator("#msib-q-title").count() == 0
    pg.goto(served_site + "practice/#q=999999")
    pg.reload()                               # a new hash alone does not reload the page
    assert pg.inner_text(".msib-practice-message") == "Question 999999 cannot be practised here yet."
