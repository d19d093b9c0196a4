"""Static against continuous batching over time (Q76): a worked example whose slots × steps chart and
numbers come from one simulation (formulas: :mod:`macros.formulas.batchsim`).

Same SVG conventions as :mod:`.figures`; ``data-*`` attributes carry the schedule drawn, for the tests.
"""

from __future__ import annotations

from html import escape

from .. import formulas as F
from .. import units as U
from ..errors import MacroInputError
from .blocks import GIVEN, Example
from .figures import LINK, figure_id
from .registry import COUNT, Arg, _each, inputs, macro

_LENGTHS = Arg(_each(inputs.count, "lengths"), "output tokens per request", "list of integers >= 1")
_W, _X0, _ROW, _BAR = 640, 92, 22, 16


def _mean(x: float) -> str:
    """A mean step, exact to three decimals: 8.125, 6.125, 7.5."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def _panel(s: F.BatchSchedule, y0: float, cw: float, label: str, span: int) -> list[str]:
    out = [f'<text x="6" y="{y0 - 8}" font-weight="bold">{label}</text>',
           f'<text x="{_W - 6}" y="{y0 - 8}" text-anchor="end">{s.steps} steps, {U.fmt_pct(s.utilization)} of '
           f'slot-steps busy</text>']
    for slot in range(s.slots):
        y = y0 + slot * _ROW
        out.append(f'<text x="{_X0 - 8}" y="{y + 12}" text-anchor="end">slot {slot + 1}</text>'
                   f'<rect x="{_X0}" y="{y}" width="{span * cw:.1f}" height="{_BAR}" fill="none" '
                   f'stroke="currentColor" stroke-opacity="0.35" stroke-dasharray="2 3"/>')
    for r in s.runs:
        x, y = _X0 + r.start * cw, y0 + r.slot * _ROW
        out.append(f'<rect class="run" data-policy="{s.policy}" data-request="{r.request + 1}" '
                   f'data-slot="{r.slot}" data-start="{r.start}" data-end="{r.end}" x="{x + 1:.1f}" y="{y}" '
                   f'width="{(r.end - r.start) * cw - 2:.1f}" height="{_BAR}" rx="3" fill-opacity="0.3" '
                   f'stroke="currentColor"/>'
                   f'<text x="{x + (r.end - r.start) * cw / 2:.1f}" y="{y + 12}" text-anchor="middle" '
                   f'font-size="11">R{r.request + 1}</text>')
    end = _X0 + s.steps * cw
    out.append(f'<path class="finish" data-policy="{s.policy}" data-steps="{s.steps}" '
               f'd="M{end:.1f},{y0 - 3}V{y0 + s.slots * _ROW - 3}" style="stroke:{LINK}" stroke-width="2.5"/>')
    return out


def batching_svg(lengths, slots: int) -> str:
    """The chart alone: one panel per policy, slots down, steps across, one bar per request."""
    st, co = F.static_batching(lengths, slots), F.continuous_batching(lengths, slots)
    span = st.steps
    cw = (_W - _X0 - 12) / span
    fid = figure_id("batching", tuple(lengths), slots)
    panel_h = slots * _ROW + 34
    body = _panel(st, 34, cw, "static batching", span) + _panel(co, 34 + panel_h, cw, "continuous batching", span)
    axis_y = 34 + 2 * panel_h - 22
    for t in range(1, span + 1):
        body.append(f'<text x="{_X0 + (t - 0.5) * cw:.1f}" y="{axis_y}" text-anchor="middle" font-size="10">{t}</text>')
    body.append(f'<text x="{_X0 + span * cw / 2:.1f}" y="{axis_y + 16}" text-anchor="middle">decode step</text>')
    h = axis_y + 22
    title = f"Static against continuous batching: {len(lengths)} queued requests on {slots} slots"
    desc = (f"Requests R1 to R{len(lengths)} need {', '.join(map(str, lengths))} steps. Static batching runs "
            f"them {slots} at a time and starts a batch only when the previous one's longest request ends: "
            f"{st.steps} steps, {U.fmt_pct(st.utilization)} of slot-steps busy, mean completion at step "
            f"{_mean(st.mean_completion)}. Continuous batching gives a freed slot to the next request at the next "
            f"step: {co.steps} steps, {U.fmt_pct(co.utilization)} busy, mean completion at step "
            f"{_mean(co.mean_completion)}.")
    return (f'<svg class="batching" viewBox="0 0 {_W} {h}" role="img" aria-labelledby="{fid}-t {fid}-d" '
            f'font-size="12" fill="currentColor"><title id="{fid}-t">{escape(title)}</title>'
            f'<desc id="{fid}-d">{escape(desc)}</desc>{"".join(body)}</svg>')


@macro("block", example='batching_timeline(lengths=[8, 3, 5, 2, 4, 6, 2, 3], slots=4)',
       args={"lengths": _LENGTHS, "slots": COUNT})
def batching_timeline(lengths: tuple = (8, 3, 5, 2, 4, 6, 2, 3), slots: int = 4) -> str:
    """Worked example with chart: the same queued requests under static and continuous batching, step by step.

    Every request is queued at step 0 and needs `lengths[i]` decode steps (one token per step, the first
    step being its prefill). Static: batches of `slots` in queue order, each lasting as long as its longest
    request. Continuous: a slot freed after step t takes the next request at step t + 1. Steps to drain the
    queue, busy share of slot-steps and mean completion step from `static_batching` / `continuous_batching`.
    """
    if len(lengths) > 16 or slots > 8:
        raise MacroInputError(f"the chart fits at most 16 requests on 8 slots, got {len(lengths)} on {slots}")
    st, co = F.static_batching(lengths, slots), F.continuous_batching(lengths, slots)
    ex = Example(f"{len(lengths)} queued requests on {slots} batch slots, static against continuous batching")
    ex.formula("busy share = sum of output lengths / (slots × steps until the queue is drained)")
    ex.formula("static: each batch of slots requests lasts max(its output lengths) steps; "
               "continuous: a slot freed after step t starts the next request at step t + 1")
    ex.input("batch slots", str(slots), GIVEN)
    ex.input("output tokens of R1 … R" + str(len(lengths)), ", ".join(map(str, lengths)),
             "given: all queued at step 0, one token per step")
    batches = [lengths[b:b + slots] for b in range(0, len(lengths), slots)]
    ex.step("static: " + " + ".join(f"max({', '.join(map(str, b))})" for b in batches) + f" = {st.steps} steps; "
            f"busy share {sum(lengths)} / ({slots} × {st.steps}) = {U.fmt_pct(st.utilization)}")
    ex.step("continuous: " + "; ".join(f"R{r.request + 1} in slot {r.slot + 1}, steps {r.start + 1}–{r.end}"
                                      for r in co.runs if r.start > 0)
            + f"; the last finishes at step {co.steps}; busy share {sum(lengths)} / ({slots} × {co.steps}) = "
              f"{U.fmt_pct(co.utilization)}")
    ex.table(f'<figure class="msib-figure">{batching_svg(lengths, slots)}<figcaption>Bars: requests in their '
             f'slots; dashed: idle slot-steps; the coloured line marks the step the queue is drained. '
             f'Generated from the batching simulation.</figcaption></figure>')
    ex.result(f"static batching: {st.steps} steps, {U.fmt_pct(st.utilization)} of slot-steps busy, "
              f"{st.idle_slot_steps()} idle; mean completion at step {_mean(st.mean_completion)}")
    ex.result(f"continuous batching: {co.steps} steps, {U.fmt_pct(co.utilization)} busy, "
              f"{co.idle_slot_steps()} idle; mean completion at step {_mean(co.mean_completion)}")
    ex.note("Completion is the step of a request's own last token, which flatters static batching: a server "
            "that returns whole batches holds short results until the batch ends. Real steps also get slower "
            "as the batch grows, and arrivals are spread out rather than all queued at once.")
    return ex.render()
