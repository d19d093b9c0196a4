"""Speculative decoding (formulas: :mod:`macros.formulas.specdec`)."""

from __future__ import annotations

from .. import formulas as F
from .blocks import GIVEN, Example, _bits, _n
from .registry import macro


@macro("block", example='spec_decode(acceptance_rate=0.7, draft_length=5, draft_cost=0.1)')
def spec_decode(acceptance_rate: float = 0.8, draft_length: int = 4, draft_cost: float = 0.05) -> str:
    """Worked example: speculative decoding E = (1 − a^(g+1)) / (1 − a) and speed-up E / (g·c + 1).

    Leviathan et al. 2023; `a` is the acceptance rate, `γ` the draft length, `c` the draft's cost
    per pass relative to the target's.
    """
    e = F.expected_tokens_per_step(acceptance_rate, draft_length)
    s = F.speculative_speedup(acceptance_rate, draft_length, draft_cost)
    a, g, c = acceptance_rate, draft_length, draft_cost
    ex = Example(f"speculative decoding, a = {_bits(a)}, γ = {g}, c = {_bits(c)}")
    ex.formula("E = (1 − a^(γ+1)) / (1 − a) tokens per target pass")
    ex.formula("speed-up = E / (γ × c + 1)")
    ex.input("acceptance rate a", _bits(a), "measured (given)")
    ex.input("draft length γ", str(g), GIVEN)
    ex.input("draft cost c (draft pass / target pass)", _bits(c), GIVEN)
    if a == 1:
        ex.step(f"a = 1: every draft token is accepted, E = γ + 1 = {g + 1}")
    else:
        ex.step(f"E = (1 − {_bits(a)}^{g + 1}) / (1 − {_bits(a)}) = {_n(e)}")
    ex.step(f"speed-up = {_n(e)} / ({g} × {_bits(c)} + 1) = {_n(s)}")
    ex.result(f"{_n(e)} tokens per target pass; {_n(s)}× faster" if s >= 1
              else f"{_n(e)} tokens per target pass; {_n(s)}×, i.e. slower than no speculation")
    ex.note("Leviathan et al. 2023 (arXiv:2211.17192); assumes i.i.d. acceptance and that verifying γ + 1 tokens "
            "costs one decode step (decode memory-bound).")
    return ex.render()


@macro("inline", example='spec_tokens(0.8, 4)')
def spec_tokens(acceptance_rate: float, draft_length: int) -> str:
    """Expected tokens per target pass, e.g. '3.36'."""
    return _n(F.expected_tokens_per_step(acceptance_rate, draft_length))
