"""RL post-training and determinism (Q153, Q154): weight-sync time per link, the longest rollout's
cost to a synchronous batch, and measured slowdowns of batch-invariant modes
(formulas: :mod:`macros.formulas.rl_serving`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _esc, _flink, _glink, _i, _mlink, _n
from .registry import COUNT, Arg, macro

_POS = Arg(inputs.number, "a number", "> 0")


def _lengths(name: str, value) -> list[int]:
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        raise MacroInputError(f"{name} must be a list of at least two output lengths (tokens), got {value!r}")
    return [inputs.count(f"{name}[{i}]", v) for i, v in enumerate(value)]


def _runs(name: str, value) -> list[tuple[str, float]]:
    if not isinstance(value, (list, tuple)) or not value:
        raise MacroInputError(f"{name} must be a non-empty list of [label, seconds] rows, got {value!r}")
    out = []
    for r in value:
        if (not isinstance(r, (list, tuple)) or len(r) != 2 or not isinstance(r[0], str)
                or isinstance(r[1], bool) or not isinstance(r[1], (int, float)) or r[1] <= 0):
            raise MacroInputError(f"each {name} row must be [label, seconds > 0], got {r!r}")
        out.append((r[0], float(r[1])))
    return out


def _efficiency(efficiency: float) -> float:
    if efficiency > 1:
        raise MacroInputError(f"efficiency is a share of the line rate, at most 1, got {efficiency!r}")
    return efficiency


@macro("block", example='weight_sync("llama-3.1-70b", gpu="h100-sxm", tp=4, nic_gbit_per_s=400, pcie_gb_per_s=64)',
       args={"tp": COUNT, "nic_gbit_per_s": _POS, "efficiency": _POS})
def weight_sync(model: Model, gpu: Gpu, nic_gbit_per_s: float, fmt: Format = "bf16", tp: int = 1,
                pcie_gb_per_s: float | None = None, efficiency: float = 1.0) -> str:
    """Worked example: time to get a new policy's weights into a running engine, per link.

    `bytes / (link bandwidth × efficiency)` for the whole checkpoint (what a broadcast backend sends
    every rank) and for one tensor-parallel shard (what a resharding backend sends each rank), over
    the GPU's NVLink (catalog, per direction), one NIC of `nic_gbit_per_s` and, when
    `pcie_gb_per_s` is given, host-to-device PCIe (waking from a sleep that kept the weights in CPU
    memory: each GPU restores its own shard).
    """
    eff = _efficiency(efficiency)
    full = F.weight_bytes(model, fmt)
    shard = full / tp
    nvlink = gpu.interconnect_bytes_per_s_per_direction
    if not nvlink:
        raise MacroInputError(f"{gpu.name} has no interconnect bandwidth in gpus.yaml")
    nic = nic_gbit_per_s * 1e9 / 8
    paths = [(f"NVLink, same node ({gpu.interconnect})", nvlink, _glink(gpu), True),
             (f"one {_n(nic_gbit_per_s)} Gbit/s NIC, across nodes", nic, GIVEN, True)]
    if pcie_gb_per_s is not None:
        paths.append(("PCIe host to device, line rate (wake from sleep, weights kept in CPU memory)",
                      pcie_gb_per_s * 1e9, GIVEN, False))
    ex = Example(f"weight sync of {model.name} ({fmt.name}) into an engine at TP={tp}")
    ex.formula("sync time = bytes each receiving GPU takes in / (link bandwidth per direction × efficiency)")
    ex.input("weights, whole checkpoint", U.fmt_gb(full), f"{_mlink(model)}, {_flink(fmt)}")
    ex.input("tensor-parallel degree of the engine", _i(tp), GIVEN)
    for label, bw, src, _ in paths:
        ex.input(f"{label}, per direction", U.fmt_bandwidth(bw), src)
    if eff != 1:
        ex.input("share of the line rate the transfer reaches", _n(eff), GIVEN)
    t_nv = F.weight_sync_time(full, nvlink, eff)
    t_nic = F.weight_sync_time(full, nic, eff)
    ex.step(f"whole checkpoint over NVLink: {U.fmt_gb(full)} / {U.fmt_bandwidth(nvlink * eff)} = "
            f"{U.fmt_seconds(t_nv)}")
    ex.step(f"whole checkpoint over one NIC: {U.fmt_gb(full)} / {U.fmt_bandwidth(nic * eff)} = "
            f"{U.fmt_seconds(t_nic)}")
    head = "| Path | Per direction | Whole checkpoint to every rank |"
    sep = "| --- | --- | --- |"
    if tp > 1:
        head += f" One shard (1/{_i(tp)}) per rank |"
        sep += " --- |"
    rows = [head, sep]
    for label, bw, _, broadcast in paths:
        t_full = F.weight_sync_time(full, bw, eff)
        t_shard = F.weight_sync_time(shard, bw, eff)
        cells = [_esc(label, cell=True), U.fmt_bandwidth(bw),
                 U.fmt_seconds(t_full) if broadcast else "not this path"]
        if tp > 1:
            cells.append(U.fmt_seconds(t_shard))
        elif not broadcast:
            cells[2] = U.fmt_seconds(t_shard)
        rows.append("| " + " | ".join(cells) + " |")
    ex.table("\n".join(rows))
    ex.result(f"{U.fmt_seconds(t_nv)} over NVLink against {U.fmt_seconds(t_nic)} over one NIC for the whole "
              f"checkpoint: the cross-node hop is {_n(round(t_nic / t_nv, 1))}× slower"
              + (f"; sending each rank only its shard divides either by {_i(tp)}" if tp > 1 else ""))
    ex.note("A lower bound: the line rate at full efficiency, no overlap with generation. Excludes the "
            "trainer's gather of its sharded parameters, the rendezvous, and the engine's post-load work "
            "(re-quantizing, re-packing). A shard is counted as 1/TP of all weights (replicated norms and "
            "embeddings ignored). The broadcast column is one ring through every node, each node's NIC carrying "
            "the whole checkpoint once. The shard column assumes the shards travel in parallel, one sender "
            "and one NIC per receiving rank (as a resharding backend with a sender per trainer rank does); "
            "ranks that share a NIC divide it, and one trainer rank sending every shard over one link gets "
            "no division by TP.")
    return ex.render()


@macro("block", example='rollout_straggler("llama-3.1-8b", gpu="h100-sxm", '
                        'lengths=[900, 1100, 1400, 1700, 2000, 2600, 3900, 16384])',
       args={"lengths": Arg(_lengths, "list of output lengths", "tokens per sequence, at least two"),
             "tp": COUNT})
def rollout_straggler(model: Model, gpu: Gpu, lengths: list, fmt: Format = "bf16", tp: int = 1) -> str:
    """Worked example: a synchronous rollout batch lasts as long as its longest output.

    Steps = max(L); slot occupancy = sum(L) / (sequences × max(L)); the tail after the second-longest
    output finishes runs one sequence. Seconds use the decode floor: one step reads the weights
    (per GPU: 1/TP of them) once, whatever the batch, from `gpu` HBM; KV reads and communication come
    on top, so the times are lower bounds.
    """
    b = F.rollout_batch(lengths)
    w = F.weight_bytes_read_per_step(model, fmt, 1) / tp
    bw = gpu.memory_bandwidth_bytes_per_s
    floor = F.decode_bound(w, 0.0, 1, bw).step_time_s
    ex = Example(f"the longest rollout in a batch of {_i(b.sequences)} on {model.name}")
    ex.formula("batch steps = longest output; occupancy = output tokens / (sequences × steps)")
    ex.formula("step floor = weight bytes per GPU / HBM bandwidth (a step reads every weight once)")
    ex.input("output lengths (tokens)", ", ".join(_i(n) for n in lengths), GIVEN)
    ex.input("weights read per step, per GPU", U.fmt_gb(w), f"{_mlink(model)}, {_flink(fmt)}, TP={_i(tp)}")
    ex.input("HBM bandwidth", U.fmt_bandwidth(bw), _glink(gpu))
    ex.step(f"output tokens {_i(b.total_tokens)}, mean {_i(round(b.mean_tokens))}, longest {_i(b.steps)}")
    ex.step(f"occupancy = {_i(b.total_tokens)} / ({_i(b.sequences)} × {_i(b.steps)}) = {U.fmt_pct(b.occupancy)}; "
            f"the batch runs {_n(round(b.stretch, 2))}× the steps the mean output needs")
    ex.step(f"step floor = {U.fmt_gb(w)} / {U.fmt_bandwidth(bw)} = {U.fmt_seconds(floor)}")
    ex.step(f"tail: {_i(b.tail_steps)} steps with one sequence left × {U.fmt_seconds(floor)} = "
            f"{U.fmt_seconds(b.tail_steps * floor)}")
    ex.result(f"the batch needs at least {U.fmt_seconds(b.steps * floor)} of decode; "
              f"{U.fmt_pct(b.idle_share)} of its sequence slots sit empty, and the last "
              f"{U.fmt_seconds(b.tail_steps * floor)} serve one sequence while the trainer waits")
    ex.note("Synchronous on-policy RL: the trainer needs the whole batch before its step. Prefill, KV reads "
            "and sampling are left out (they lengthen every step); continuous batching refills empty slots "
            "only with new prompts, which a synchronous batch does not have.")
    return ex.render()


@macro("block", example='determinism_cost(baseline_s=26, runs=[["batch-invariant kernels", 55], '
                        '["with an improved (faster) batch-invariant attention kernel", 42]], '
                        'work="1,000 sequences on Qwen3-8B", '
                        'source="[Thinking Machines](https://thinkingmachines.ai/blog/defeating-nondeterminism-in-llm-inference/)")',
       args={"baseline_s": _POS, "runs": Arg(_runs, "rows", "[[label, seconds], ...]")})
def determinism_cost(baseline_s: float, runs: list, work: str, source: str) -> str:
    """Worked example: measured slowdown of deterministic (batch-invariant) runs against the default.

    Ratio = run / baseline, overhead = ratio − 1, throughput kept = baseline / run. `runs` rows are
    `[label, seconds]`; `work` names what was timed and `source` where the timings come from.
    """
    if not work.strip() or not source.strip():
        raise MacroInputError("determinism_cost needs the work timed (work=) and where the timings come from (source=)")
    ex = Example(f"the cost of batch invariance: {work}")
    ex.formula("slowdown = deterministic time / default time; throughput kept = default time / deterministic time")
    ex.input("default run", U.fmt_seconds(baseline_s), source)
    for label, s in runs:
        ex.input(label, U.fmt_seconds(s), source)
    rows = ["| Run | Time | Slowdown | Overhead | Throughput kept |", "| --- | --- | --- | --- | --- |",
            f"| default | {U.fmt_seconds(baseline_s)} | 1× | none | all |"]
    results = []
    for label, s in runs:
        d = F.slowdown(baseline_s, s)
        results.append((label, d))
        rows.append(f"| {_esc(label, cell=True)} | {U.fmt_seconds(s)} | {_n(round(d.ratio, 2))}× | "
                    f"{U.fmt_pct(d.overhead)} | {U.fmt_pct(d.throughput_share)} |")
    ex.table("\n".join(rows))
    best = min(results, key=lambda r: r[1].ratio)
    ex.result(f"the cheapest deterministic run ({_esc(best[0])}) takes {_n(round(best[1].ratio, 2))}× the default "
              f"time and keeps {U.fmt_pct(best[1].throughput_share)} of its throughput")
    ex.note("Measured once, on one model, GPU and workload: the ratio moves with batch size, sequence lengths "
            "and which kernels the engine had to replace.")
    return ex.render()
