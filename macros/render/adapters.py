"""LoRA adapters (formulas: :mod:`macros.formulas.adapters`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Model
from .blocks import GIVEN, Example, _bytes_el, _flink, _i, _mlink
from .registry import macro


@macro("block", example='lora_size("llama-3.1-8b", rank=16, targets="q_proj,k_proj,v_proj,o_proj")')
def lora_size(model: Model, rank: int = 16, targets: str = "q_proj,v_proj", dtype: Format = "bf16") -> str:
    """Worked example: LoRA adapter bytes = rank × (d_in + d_out) per matrix × layers × bytes.

    And its share of the base weights. Targets: `q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj,
    down_proj` (MLP targets on dense models only; not for MLA or hybrid linear-attention models).
    """
    m, f, r = model, dtype, rank
    shapes = F.lora_target_shapes(m, targets)
    params = F.lora_params(m, r, [s[0] for s in shapes])
    eb = f.bits_per_weight / 8
    nbytes = F.lora_adapter_bytes(params, eb)
    ex = Example(f"LoRA adapter of rank {r} on {m.name}")
    ex.formula("adapter params = layers × Σ over targets of rank × (d_in + d_out)")
    for name, d_in, d_out in shapes:
        ex.input(f"`{name}` d_in × d_out", f"{_i(d_in)} × {_i(d_out)}", _mlink(m))
    ex.input("`num_hidden_layers`", _i(m.num_hidden_layers), _mlink(m))
    ex.input("rank", str(r), GIVEN)
    ex.input(f"bytes per element ({f.key})", _bytes_el(eb), _flink(f))
    per_layer = " + ".join(f"{r} × ({_i(a)} + {_i(b)})" for _, a, b in shapes)
    ex.step(f"per layer: {per_layer} = {_i(params // m.num_hidden_layers)}")
    ex.step(f"× {m.num_hidden_layers} layers = {_i(params)} parameters; × {_bytes_el(eb)} bytes = {_i(nbytes)} bytes")
    ex.result(U.fmt_bytes(nbytes))
    base = F.weight_bytes(m, f)
    ex.result(f"{U.fmt_pct(nbytes / base)} of the base model's {U.fmt_gb(base)} of {f.key} weights")
    return ex.render()
