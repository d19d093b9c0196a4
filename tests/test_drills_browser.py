"""The napkin-math drills in headless Chromium, on the online build and the offline bundle: a round by
keyboard alone, a wrong answer that names its mistake, messages instead of verdicts, the daily set and
share links reproducing their sets (checked against the Python reference, not against the page), the
URL as data only, spaced review in the shared progress store with export and import, practice's drill
mode, the worked solution as the site's worked-example wrapper renders it, and axe at desktop and phone
width with a solution on screen."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

import drillkit
from sitebuild import drills as D
from sitekit import foreign_requests
from test_accessibility import BLOCKING, describe, run_axe

pytestmark = pytest.mark.browser

KEY = "msib.progress"
T0 = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.timezone.utc)
DAY = dt.timedelta(days=1)


@pytest.fixture
def ctx(browser):
    contexts = []

    def make(when=T0, **kw):
        viewport = kw.pop("viewport", {"width": 1280, "height": 900})
        context = browser.new_context(timezone_id="UTC", viewport=viewport, **kw)
        contexts.append(context)
        pg = context.new_page()
        pg.errors, pg.requests, pg.dialogs = [], [], []
        pg.on("pageerror", lambda e: pg.errors.append(str(e)))
        pg.on("request", lambda r: pg.requests.append(r.url))
        pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
        pg.clock.install(time=when)
        return pg

    yield make
    for c in contexts:
        c.close()


@pytest.fixture(params=["online", "offline"])
def where(request, served_site, offline_site):
    if request.param == "online":
        return "online", lambda src: served_site + ("" if src == "index.md" else src[:-3] + "/")
    root = offline_site.as_uri() + "/"
    return "offline", lambda src: root + src[:-3] + ".html"


def online(served_site):
    return lambda src: served_site + src[:-3] + "/"


def stored(pg):
    raw = pg.evaluate(f"localStorage.getItem({KEY!r})")
    return None if raw is None else json.loads(raw)


def open_set(pg, url, items=None, daily=None):
    frag = f"#daily={daily}" if daily else "#set=" + ",".join(f"{k}.{s}" for k, s in items)
    pg.goto(url("drills.md") + frag)
    pg.wait_for_selector("#msib-drill-title")


def right_answer(inst: dict) -> str:
    """The exact answer, typed as a person would, in the unit the drill's dimension reads."""
    dim, x = D.TYPES[inst["type"]].dim, inst["answer"]
    if dim == "list":
        return ", ".join(map(str, x))
    if dim == "time":
        return f"{x * 1000!r} ms"
    unit = {"bytes": " bytes", "rate": " tok/s", "bits": " bits"}.get(dim, "")
    return f"${x!r}" if dim == "usd" else f"{x!r}{unit}"


def answer_with(pg, text):
    pg.fill("#msib-drill-answer", text)
    pg.click("#msib-drill-check")


def seed_of_link(pg) -> list[tuple[str, int]]:
    href = pg.get_attribute("#msib-drill-link", "href")
    items = re.search(r"#set=(.*)$", href).group(1).split(",")
    return [(k, int(s)) for k, s in (i.split(".") for i in items)]


def prompts_of_round(pg, n):
    out = []
    for i in range(n):
        pg.wait_for_selector("#msib-drill-title")
        out.append(pg.inner_text("#msib-drill-prompt"))
        pg.click("#msib-drill-giveup")
        pg.click("#msib-drill-next")
    pg.wait_for_selector("#msib-drill-summary-h")
    return out


def find(key, want) -> dict:
    for seed in range(2000):
        inst = D.make(key, seed)
        if want(inst):
            return inst
    raise AssertionError(f"no {key} drill found")


# --- a round -----------------------------------------------------------------------------------------

def test_keyboard_only_round(ctx, served_site):
    pg = ctx()
    pg.goto(served_site + "drills/")
    pg.wait_for_selector("#msib-drill-start")
    pg.focus("#msib-drill-type")
    target = list(D.TYPES).index("kv_batch") + 1
    for _ in range(target):
        pg.keyboard.press("ArrowDown")
    assert pg.input_value("#msib-drill-type") == "kv_batch"
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.id") == "msib-drill-count"
    pg.keyboard.press("Control+A")
    pg.keyboard.type("1")
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.id") == "msib-drill-start"
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.id") == "msib-drill-title"
    (key, seed), = seed_of_link(pg)
    inst = D.make(key, seed)
    assert key == "kv_batch" and pg.inner_text("#msib-drill-prompt") == inst["prompt"]
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.id") == "msib-drill-answer"
    pg.keyboard.type(right_answer(inst))
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.id") == "msib-drill-verdict"
    assert pg.inner_text("#msib-drill-verdict").startswith("Right.")
    for _ in range(40):
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.id") == "msib-drill-next":
            break
    assert pg.evaluate("document.activeElement.id") == "msib-drill-next"
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.id") == "msib-drill-summary-h"
    assert pg.inner_text("#msib-drill-summary-total") == "1 of 1 right."
    assert not pg.errors


def test_a_wrong_answer_names_its_mistake(where, ctx):
    mode, url = where
    inst = find("kv_batch", lambda i: "query_heads" in i["traps"])
    pg = ctx()
    open_set(pg, url, [("kv_batch", inst["seed"])])
    before = stored(pg)
    # Napkin arithmetic with the query heads, rounded to three figures, in GB.
    answer_with(pg, f"{inst['traps']['query_heads'] / 1e9:.3g} GB")
    verdict = pg.inner_text("#msib-drill-verdict")
    assert verdict.startswith("Not quite.")
    assert "query heads instead of KV heads" in pg.inner_text("#msib-drill-trap")
    assert inst["answer_text"] in verdict
    assert pg.locator("#msib-drill-solution").count() == 1
    assert stored(pg) != before and stored(pg)["drills"]["kv_batch"]["reviews"][-1]["trap"] == "query_heads"
    assert not pg.errors


def test_a_right_answer_close_to_a_mistake_passes_with_a_note(ctx, served_site):
    inst = find("weights", lambda i: i["answer"] > 2e10)
    pg = ctx()
    open_set(pg, online(served_site), [("weights", inst["seed"])])
    gb = inst["answer"] / 1e9
    answer_with(pg, f"{gb:.1f} GiB")   # worked out in GB, written as GiB: 7.4% high, inside the tolerance
    assert pg.inner_text("#msib-drill-verdict").startswith("Right.")
    assert "GB read as GiB" in pg.inner_text("#msib-drill-trap")


def test_missing_or_wrong_units_get_a_message_not_a_verdict(ctx, served_site):
    inst = D.make("weights", 3)
    pg = ctx()
    open_set(pg, online(served_site), [("weights", 3)])
    for text, words in (("140", "Add a unit"), ("0.35 s", "is a time"), ("130,4 GiB", "point for decimals"),
                        ("<img src=x onerror=alert(1)>", "No number")):
        answer_with(pg, text)
        assert words in pg.inner_text("#msib-drill-fix"), text
        assert pg.get_attribute("#msib-drill-answer", "aria-invalid") == "true"
        assert pg.locator("#msib-drill-verdict").count() == 0
    assert stored(pg) is None, "no verdict, nothing recorded"
    assert pg.locator("#msib-drills img").count() == 0 and not pg.dialogs
    answer_with(pg, right_answer(inst))
    assert pg.inner_text("#msib-drill-verdict").startswith("Right.")


# --- sets and links ----------------------------------------------------------------------------------

def test_the_daily_link_reproduces_its_set(where, ctx):
    mode, url = where
    day = T0.date().isoformat()
    want = [D.make(k, s)["prompt"] for k, s in D.daily_set(day)]
    pg = ctx()
    pg.goto(url("drills.md"))
    pg.click("#msib-drill-daily")
    assert pg.get_attribute("#msib-drill-link", "href").endswith(f"#daily={day}")
    first = prompts_of_round(pg, D.DAILY_SIZE)
    assert first == want
    later = ctx(when=T0 + 5 * DAY)
    later.goto(url("drills.md") + f"#daily={day}")
    assert prompts_of_round(later, D.DAILY_SIZE) == want
    later.goto(url("drills.md"))
    later.click("#msib-drill-daily")
    other = (T0 + 5 * DAY).date().isoformat()
    assert later.inner_text("#msib-drill-prompt") == D.make(*D.daily_set(other)[0])["prompt"]
    assert not pg.errors and not later.errors


def test_a_random_set_link_reproduces_the_set(ctx, served_site):
    pg = ctx()
    pg.goto(served_site + "drills/")
    pg.fill("#msib-drill-count", "3")
    pg.click("#msib-drill-start")
    pg.wait_for_selector("#msib-drill-title")
    items = seed_of_link(pg)
    link = pg.get_attribute("#msib-drill-link", "href")
    assert len(items) == 3 and len({k for k, _ in items}) == 3
    assert prompts_of_round(pg, 3) == [D.make(k, s)["prompt"] for k, s in items]
    other = ctx()
    other.goto(link)
    assert prompts_of_round(other, 3) == [D.make(k, s)["prompt"] for k, s in items]


@pytest.mark.parametrize("frag, words", [
    ("#set=<img%20src=x%20onerror=alert(1)>", "is not a drill"),
    ("#set=weights.1,<script>alert(1)</script>", "item 2"),
    ("#set=weights.99999999999", "is not a drill"),
    ("#set=no_such_type.1", "is not a drill"),
    ("#set=" + ",".join(["weights.1"] * 21), "from 1 to 20"),
    ("#daily=2026-02-30", "no valid date"),
    ("#daily=%3Cb%3Ex", "no valid date"),
])
def test_the_address_carries_data_only(ctx, served_site, frag, words):
    pg = ctx()
    pg.goto(served_site + "drills/" + frag)
    pg.wait_for_selector("#msib-drill-start")
    assert words in pg.inner_text("#msib-drill-message")
    assert pg.locator("#msib-drills img, #msib-drills script, #msib-drills b").count() == 0
    assert pg.locator("#msib-drill-title").count() == 0 and not pg.dialogs and not pg.errors


# --- spaced review in the shared store ---------------------------------------------------------------

def test_spaced_review_and_export_import_carry_the_drills(ctx, served_site, tmp_path):
    url = online(served_site)
    inst = D.make("kv_token", 5)
    pg = ctx()
    open_set(pg, url, [("kv_token", 5)])
    pg.click("#msib-drill-giveup")                 # the solution shown: a miss
    entry = stored(pg)["drills"]["kv_token"]
    assert entry["box"] == 1 and entry["due"] == (T0 + DAY).date().isoformat()
    assert entry["reviews"] == [{"date": T0.date().isoformat(), "right": False, "seed": 5, "trap": None}]
    assert stored(pg)["version"] == 3
    pg.goto(url("drills.md"))
    pg.click("#msib-drill-due")
    assert pg.inner_text("#msib-drill-message") == "No drill type is due for review today."

    pg.clock.set_system_time(T0 + DAY)
    pg.goto(url("drills.md"))
    row = pg.locator("#msib-drill-type-table tr", has_text="KV bytes per token")
    assert "due today" in row.inner_text()
    pg.click("#msib-drill-due")
    assert pg.inner_text("#msib-drill-title") == "KV bytes per token"
    (key, seed), = seed_of_link(pg)
    answer_with(pg, right_answer(D.make(key, seed)))
    assert pg.inner_text("#msib-drill-verdict").startswith("Right.")
    entry = stored(pg)["drills"]["kv_token"]
    assert entry["box"] == 2 and entry["due"] == (T0 + 3 * DAY).date().isoformat()
    assert inst["type"] == "kv_token"

    pg.goto(url("practice.md"))
    assert "1 drill types drilled, 0 due" in pg.inner_text("#msib-progress-summary")
    with pg.expect_download() as dl:
        pg.click("#msib-export")
    path = tmp_path / "progress.json"
    dl.value.save_as(path)
    exported = json.loads(path.read_text(encoding="utf-8"))
    assert exported["version"] == 3 and exported["drills"] == stored(pg)["drills"]
    fresh = ctx(when=T0 + DAY)
    fresh.goto(url("practice.md"))
    fresh.set_input_files("#msib-import-file", str(path))
    fresh.wait_for_function("document.querySelector('.msib-practice-message').textContent.startsWith('Imported')")
    assert "1 drill types" in fresh.inner_text(".msib-practice-message")
    assert stored(fresh)["drills"] == exported["drills"]
    fresh.goto(url("drills.md"))
    assert "box 2 of 5" in fresh.locator("#msib-drill-type-table tr", has_text="KV bytes per token").inner_text()


def test_a_damaged_drill_entry_is_refused_on_import(ctx, served_site, tmp_path):
    pg = ctx()
    pg.goto(served_site + "practice/")
    good = {"format": "msib-progress", "version": 3, "ticked": [], "questions": {}, "drills": {}}
    pg.evaluate(f"localStorage.setItem({KEY!r}, {json.dumps(json.dumps(good))})")
    pg.reload()
    bad = dict(good, drills={"<img src=x>": {"box": 1, "due": "2026-03-03", "reviews": []}})
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    pg.set_input_files("#msib-import-file", str(path))
    pg.wait_for_function("document.querySelector('.msib-practice-message').textContent.startsWith('Import refused')")
    assert "is not a drill type" in pg.inner_text(".msib-practice-message")
    assert stored(pg) == good and pg.locator("#msib-practice img").count() == 0


# --- practice's drill mode and the offline bundle -------------------------------------------------------

def test_practice_drill_mode(where, ctx):
    mode, url = where
    pg = ctx()
    pg.goto(url("practice.md"))
    pg.click("#msib-drills-daily")
    pg.wait_for_selector("#msib-drill-title")
    day = D.daily_set(T0.date().isoformat())
    assert pg.inner_text("#msib-drill-prompt") == D.make(*day[0])["prompt"]
    answer_with(pg, right_answer(D.make(*day[0])))
    assert pg.inner_text("#msib-drill-verdict").startswith("Right.")
    pg.click("#msib-drill-question a")
    pg.wait_for_load_state()
    assert pg.locator("article h1").count() == 1
    allowed = url("index.md").rsplit("/", 1)[0] + "/"
    assert not foreign_requests(pg.requests, allowed)
    assert not pg.errors


def test_drills_work_in_the_offline_bundle_without_leaving_it(ctx, offline_site):
    root = offline_site.as_uri() + "/"
    pg = ctx()
    inst = D.make("allreduce", 9)
    pg.goto(root + "drills.html#set=allreduce.9")
    pg.wait_for_selector("#msib-drill-title")
    assert pg.inner_text("#msib-drill-prompt") == inst["prompt"]
    answer_with(pg, right_answer(inst))
    assert pg.inner_text("#msib-drill-verdict").startswith("Right.")
    for a in pg.locator("#msib-drill-solution a, #msib-drill-question a").all():
        assert a.get_attribute("href").split("#")[0].endswith(".html")
    assert pg.get_attribute("#msib-drill-link", "href").startswith(root + "drills.html#set=")
    assert not foreign_requests(pg.requests, root) and not pg.errors


# --- the worked solution -------------------------------------------------------------------------------

def test_the_solution_is_the_site_worked_example(ctx, served_site):
    pg = ctx()
    for key in D.TYPES:
        inst = D.make(key, 17)
        open_set(pg, online(served_site), [(key, 17)])
        pg.click("#msib-drill-giveup")
        shown = " ".join(pg.locator("#msib-drill-solution").inner_text().split())
        assert shown == drillkit.solution_text(inst), key
        links = pg.locator("#msib-drill-solution a")
        assert (links.count() >= 1) == bool(inst["refs"]), key  # every catalog input links to its entry
        for i in range(links.count()):
            href = links.nth(i).get_attribute("href")
            assert re.search(r"/reference/(models|gpus|formats|prices)/#(model|gpu|format|price|api)-", href), href
        q = pg.locator("#msib-drill-question a")
        assert q.inner_text().startswith(f"Q{inst['question']} · ")


# --- accessibility with a drill on screen ------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_with_a_solution_on_screen(ctx, served_site, scheme):
    pg = ctx(color_scheme=scheme)
    inst = find("kv_batch", lambda i: "query_heads" in i["traps"])
    open_set(pg, online(served_site), [("kv_batch", inst["seed"])])
    answer_with(pg, "140")                                          # a message
    bad = [v for v in run_axe(pg) if v["impact"] in BLOCKING]
    assert not bad, f"drill with a message ({scheme}):\n  {describe(bad)}"
    answer_with(pg, f"{inst['traps']['query_heads'] / 1e9:.3g} GB")  # a verdict and the solution
    bad = [v for v in run_axe(pg) if v["impact"] in BLOCKING]
    assert not bad, f"drill with its solution ({scheme}):\n  {describe(bad)}"


def test_axe_and_layout_at_phone_width(ctx, served_site):
    pg = ctx(viewport={"width": 412, "height": 823}, is_mobile=True, has_touch=True)
    inst = D.make("decode_batch", 4)
    open_set(pg, online(served_site), [("decode_batch", 4)])
    answer_with(pg, right_answer(inst))
    pg.wait_for_function("document.documentElement.classList.contains('msib-settled')", timeout=10000)
    bad = [v for v in run_axe(pg) if v["impact"] in BLOCKING or v["id"] == "heading-order"]
    assert not bad, f"drill at 412 px:\n  {describe(bad)}"
    # Nothing but the solution's own table scrolls sideways: the page itself fits the phone.
    assert pg.evaluate("document.documentElement.scrollWidth") <= 412
    box = pg.locator("#msib-drill-answer").bounding_box()
    assert box["width"] >= 200 and box["x"] + box["width"] <= 412
