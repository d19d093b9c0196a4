"""Fleet scaling (Q136): what a cold start costs stage by stage, the headroom a ramp needs while it runs,
and naive vs fan-out distribution of weights to many new nodes, as a table and a figure
(formulas: :mod:`macros.formulas.fleet_routing`, :mod:`macros.formulas.transfer`)."""

from __future__ import annotations

import math
from html import escape

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _flink, _mlink, _n
from .linechart import ACCENT, DASHED, SOLID, Series, line_chart
from .registry import Arg, macro

_POS = Arg(inputs.number, "a number", "> 0")
_NONNEG = Arg(lambda name, v: inputs.number(name, v, positive=False), "a number", ">= 0")


def _s(seconds: float) -> str:
    return U.fmt_seconds(seconds)


@macro("block", example='cold_start_headroom("llama-3.1-70b", fmt="fp8", provision_s=180, image_gb=8, '
                        'image_unpacked_gb=20, registry_gbit_per_s=10, unpack_gb_per_s=0.5, storage_gb_per_s=1, '
                        'init_s=90, detect_s=60, ramp_per_min=2, replica_rps=4, base_rps=20)',
       args={"provision_s": _NONNEG, "image_gb": _POS, "image_unpacked_gb": _POS, "registry_gbit_per_s": _POS,
             "unpack_gb_per_s": _POS, "init_s": _NONNEG, "detect_s": _NONNEG, "ramp_per_min": _NONNEG,
             "replica_rps": _POS, "base_rps": _POS})
def cold_start_headroom(model: Model, fmt: Format = "bf16", provision_s: float = 0.0, image_gb: float = 8.0,
                        image_unpacked_gb: float = 20.0, registry_gbit_per_s: float = 10.0,
                        unpack_gb_per_s: float = 0.5, storage_gb_per_s: float = 1.0, init_s: float = 60.0,
                        detect_s: float = 60.0, ramp_per_min: float = 1.0, replica_rps: float = 4.0,
                        base_rps: float = 20.0) -> str:
    """Worked example: a replica's cold start by stage, and the spare replicas a load ramp needs meanwhile.

    Cold start = node provisioning (given) + image pull (compressed / registry link + unpacked / unpack
    rate) + weight load (weights / storage bandwidth) + engine start-up (given, measured: compilation,
    CUDA graphs, KV profiling). Spare replicas = ceil(ramp × (detection + cold start) / replica capacity);
    highest utilisation target = base / (base + ramp × window). Ramp in requests/s gained per minute.
    """
    if image_gb > image_unpacked_gb:
        raise MacroInputError(f"cold_start_headroom: image_gb ({image_gb:g}) is the compressed size and cannot "
                              f"exceed image_unpacked_gb ({image_unpacked_gb:g})")
    pull = F.image_pull_time(image_gb * 1e9, image_unpacked_gb * 1e9, registry_gbit_per_s * 1e9 / 8,
                             unpack_gb_per_s * 1e9)
    wbytes = F.weight_bytes(model, fmt)
    load = F.model_load_time(wbytes, storage_gb_per_s * 1e9)
    cold = provision_s + pull + load + init_s
    ramp = ramp_per_min / 60.0
    h = F.ramp_headroom(ramp, detect_s, cold, replica_rps, base_rps)
    ex = Example(f"a new replica of {model.name} ({fmt.name}) during a ramp of {_n(ramp_per_min)} requests/s "
                 "per minute")
    ex.formula("cold start = provisioning + image pull + weight load + engine start-up")
    ex.formula("image pull = compressed / registry link + unpacked / unpack rate; weight load = weights / storage")
    ex.formula("spare replicas = ceil(ramp × (detection + cold start) / replica capacity)")
    ex.formula("highest utilisation target = base load / (base load + ramp × (detection + cold start))")
    ex.input("node provisioning (no free GPU node)", _s(provision_s), "measured (given); 0 when a node is free")
    ex.input("serving image, compressed / unpacked",
             f"{U.fmt_gb(image_gb * 1e9)} / {U.fmt_gb(image_unpacked_gb * 1e9)}", GIVEN)
    ex.input("registry link / unpack rate", f"{_n(registry_gbit_per_s)} Gbit/s / {_n(unpack_gb_per_s)} GB/s",
             GIVEN)
    ex.input("weights", U.fmt_gb(wbytes), f"{_mlink(model)}, {_flink(fmt)}")
    ex.input("storage read bandwidth", f"{_n(storage_gb_per_s)} GB/s", GIVEN)
    ex.input("engine start-up (compile, CUDA graphs, KV profiling)", _s(init_s), "measured (given)")
    ex.input("detection (scrape, averaging, sync period)", _s(detect_s), "assumption")
    ex.input("ramp / replica capacity at the SLO / base load",
             f"{_n(ramp_per_min)} requests/s per minute / {_n(replica_rps)} requests/s / {_n(base_rps)} requests/s",
             "traffic history / load test (given)")
    ex.step(f"image pull: {U.fmt_gb(image_gb * 1e9)} / {U.fmt_num(registry_gbit_per_s / 8)} GB/s + "
            f"{U.fmt_gb(image_unpacked_gb * 1e9)} / {_n(unpack_gb_per_s)} GB/s = {_s(pull)}")
    ex.step(f"weight load: {U.fmt_gb(wbytes)} / {_n(storage_gb_per_s)} GB/s = {_s(load)}")
    ex.step(f"cold start: {_s(provision_s)} + {_s(pull)} + {_s(load)} + {_s(init_s)} = {_s(cold)}")
    ex.step(f"window: {_s(detect_s)} + {_s(cold)} = {_s(h.window)}; the load gains "
            f"{_n(ramp_per_min)} / 60 × {_n(h.window)} s = {_n(h.extra_load)} requests/s")
    ex.step(f"spare: ceil({_n(h.extra_load)} / {_n(replica_rps)}) = {h.spare_replicas} replicas; "
            f"target ≤ {_n(base_rps)} / ({_n(base_rps)} + {_n(h.extra_load)}) = {U.fmt_pct(h.max_target)}")
    stages = [("node provisioning", provision_s), ("image pull", pull), ("weight load", load),
              ("engine start-up", init_s)]
    rows = ["| Stage | Time | Share of the cold start |", "| --- | --- | --- |"]
    rows += [f"| {name} | {_s(t)} | {U.fmt_pct(t / cold) if cold else '–'} |" for name, t in stages]
    ex.table("\n".join(rows))
    ex.result(f"a new replica serves {_s(h.window)} after the ramp starts; keep {h.spare_replicas} spare "
              f"replica{'s' if h.spare_replicas != 1 else ''} (a utilisation target of at most "
              f"{U.fmt_pct(h.max_target)} at {_n(base_rps)} requests/s)")
    ex.note("Stages taken one after the other, as a pod starts them by default; a streaming loader overlaps "
            "the read with the copy to GPU memory, and a pre-pulled image or a node-local weight cache removes a "
            "stage. A linear ramp; a step (a batch job, a launch) needs the whole step in headroom.")
    return ex.render()


# --- weight distribution to many nodes ---------------------------------------------------------------

_SERIES = (("naive", "every node reads the store", DASHED), ("tree", "copy tree (doubling)", SOLID),
           ("pipelined", "pipelined chain", ACCENT))


def fanout_svg(rows: list[F.Distribution], title: str) -> str:
    """Seconds (log scale) against node count (log 2 scale), one line per scheme, from the same rows as the table."""
    hi = 10 ** math.ceil(math.log10(max(v for r in rows for v in (r.naive, r.tree, r.pipelined))))
    last = rows[-1]
    desc = (f"Time to put the weights on N new nodes. At {last.nodes} nodes: every node reading the store at once "
            f"{_s(last.naive)}, a copy tree {_s(last.tree)}, a pipelined chain {_s(last.pipelined)}.")
    return line_chart(f"fig-fanout-{last.nodes}-{int(hi)}", escape(title), escape(desc),
                      f"{escape(title)}. Generated from the same formula as the table.", [r.nodes for r in rows],
                      [Series(label, [getattr(r, attr) for r in rows], look) for attr, label, look in _SERIES],
                      "new nodes (log scale)", "seconds until all nodes load (log scale)",
                      log2_x=True, svg_class="fanout", log10_y=True, y_fmt=_n, grid=True)


@macro("block", example='weight_fanout("llama-3.1-70b", fmt="fp8", node_gbit_per_s=400, store_gb_per_s=10)',
       args={"node_gbit_per_s": _POS, "store_gb_per_s": _POS, "chunk_mb": _POS})
def weight_fanout(model: Model, fmt: Format = "bf16", node_gbit_per_s: float = 100.0, store_gb_per_s: float = 10.0,
                  chunk_mb: float = 64.0, nodes: list | None = None) -> str:
    """Worked example and figure: weights to N new nodes, every node reading the store vs copy tree vs chain.

    Naive = weights × max(1 / node link, N / store); tree = one read from the store, then ceil(log2 N)
    doubling rounds of node-to-node copies; pipelined = one read plus (N − 1) chunks of forwarding down a
    chain. `node_gbit_per_s` is one node's network link, `store_gb_per_s` the store's aggregate read
    bandwidth, `nodes` the N values (default 1 to 256 by powers of two).
    """
    ns = [1, 2, 4, 8, 16, 32, 64, 128, 256] if nodes is None else [inputs.count("nodes", n) for n in nodes]
    if not ns or ns != sorted(set(ns)):
        raise MacroInputError(f"nodes must be increasing node counts, got {nodes!r}")
    wbytes = F.weight_bytes(model, fmt)
    link, store, chunk = node_gbit_per_s * 1e9 / 8, store_gb_per_s * 1e9, chunk_mb * 1e6
    rows = [F.weight_distribution(n, wbytes, link, store, chunk) for n in ns]
    ex = Example(f"{model.name} ({fmt.name}) weights to many new nodes at once")
    ex.formula("naive = W × max(1 / node link, N / store)")
    ex.formula("tree = W / min(node link, store) + ceil(log2 N) × W / node link")
    ex.formula("pipelined chain = W / min(node link, store) + (N − 1) × chunk / node link")
    ex.input("weights per node W", U.fmt_gb(wbytes), f"{_mlink(model)}, {_flink(fmt)}; one replica per node")
    ex.input("node network link", f"{_n(node_gbit_per_s)} Gbit/s ({U.fmt_bandwidth(link)})", GIVEN)
    ex.input("shared store, aggregate read", f"{_n(store_gb_per_s)} GB/s", GIVEN)
    ex.input("chunk forwarded down the chain", U.fmt_bytes(chunk), "assumption")
    big = rows[-1]
    ex.step(f"naive at {big.nodes} nodes: {U.fmt_gb(wbytes)} × max(1 / {U.fmt_bandwidth(link)}, {big.nodes} / "
            f"{_n(store_gb_per_s)} GB/s) = {_s(big.naive)}")
    ex.step(f"tree at {big.nodes} nodes: {_s(wbytes / min(link, store))} + {(big.nodes - 1).bit_length()} × "
            f"{_s(wbytes / link)} = {_s(big.tree)}")
    ex.step(f"chain at {big.nodes} nodes: {_s(wbytes / min(link, store))} + {big.nodes - 1} × {U.fmt_bytes(chunk)} / "
            f"{U.fmt_bandwidth(link)} = {_s(big.pipelined)}")
    table = ["| New nodes | Every node reads the store | Copy tree | Pipelined chain |", "| --- | --- | --- | --- |"]
    table += [f"| {r.nodes} | {_s(r.naive)} | {_s(r.tree)} | {_s(r.pipelined)} |" for r in rows]
    ex.table("\n".join(table))
    if len(rows) > 1:
        ex.table(fanout_svg(rows, f"Time to load {model.name} ({fmt.name}) onto N new nodes"))
    ex.result(f"at {big.nodes} nodes: {_s(big.naive)} naive, {_s(big.tree)} with a copy tree, {_s(big.pipelined)} "
              "with a pipelined chain")
    ex.note("One node per replica; with tensor parallelism each GPU needs only its shard, but a node still "
            "receives the whole replica's weights. Ignores connection set-up and the write behind the link "
            "(page cache, NVMe or GPU memory), which caps the node's receive rate in practice.")
    return ex.render()


# --- multi-node groups in NVLink domains ---------------------------------------------------------------

@macro("block", example='nvlink_packing(domain_nodes=18, gpus_per_node=4, group_sizes=[8, 16, 32, 72])',
       args={"domain_nodes": Arg(inputs.count, "nodes in one NVLink domain", "integer >= 1"),
             "gpus_per_node": Arg(inputs.count, "GPUs per node", "integer >= 1"),
             "domains": Arg(inputs.count, "NVLink domains in the fleet", "integer >= 1")})
def nvlink_packing(domain_nodes: int, gpus_per_node: int, group_sizes: list, domains: int = 1,
                   domain_name: str = "NVLink domain") -> str:
    """Worked example: serving groups per NVLink domain, stranded GPUs, and the effect of one failed node.

    A group of G GPUs takes ceil(G / GPUs per node) whole nodes; groups per domain = floor(domain nodes /
    nodes per group); stranded = domain GPUs − groups × G. `group_sizes` lists the G values to compare;
    `domains` scales the totals to a fleet.
    """
    if not isinstance(group_sizes, (list, tuple)) or not group_sizes:
        raise MacroInputError(f"group_sizes must be a non-empty list of GPU counts, got {group_sizes!r}")
    sizes = [inputs.count("group_sizes", g) for g in group_sizes]
    rows = [F.pack_groups(domain_nodes, gpus_per_node, g) for g in sizes]
    total = domain_nodes * gpus_per_node
    nodes_txt = f"{domain_nodes} node{'s' if domain_nodes > 1 else ''}"
    ex = Example(f"groups per {escape(domain_name)} of {nodes_txt} × {gpus_per_node} GPUs")
    ex.formula("nodes per group = ceil(G / GPUs per node); groups = floor(domain nodes / nodes per group)")
    ex.formula("a group that fits in one node: floor(GPUs per node / G) groups per node")
    ex.formula("stranded GPUs = domain nodes × GPUs per node − groups × G")
    ex.input("NVLink domain", f"{nodes_txt} × {gpus_per_node} GPUs = {total} GPUs", GIVEN)
    ex.input("group sizes G (GPUs per replica)", ", ".join(str(g) for g in sizes), GIVEN)
    if domains > 1:
        ex.input("domains in the fleet", str(domains), GIVEN)
    worst = max(rows, key=lambda r: r.stranded_gpus)
    ex.step(f"G = {worst.group_gpus}: ceil({worst.group_gpus} / {gpus_per_node}) = {worst.nodes_per_group} nodes; "
            f"floor({domain_nodes} / {worst.nodes_per_group}) = {worst.groups} groups; "
            f"{total} − {worst.groups} × {worst.group_gpus} = {worst.stranded_gpus} stranded")
    head = ("| G | Nodes per group | Groups per domain | Stranded GPUs | Stranded share | Groups with one node down "
            "| Stranded, one group per domain (exclusive) |")
    table = [head + (" Groups in the fleet |" if domains > 1 else ""),
             "| --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if domains > 1 else "")]
    for r in rows:
        line = (f"| {r.group_gpus} | {r.nodes_per_group} | {r.groups} | {r.stranded_gpus} | "
                f"{U.fmt_pct(r.stranded_gpus / total)} | {r.groups_one_node_down} | {r.stranded_exclusive} |")
        table.append(line + (f" {r.groups * domains} |" if domains > 1 else ""))
    ex.table("\n".join(table))
    best = [r for r in rows if r.stranded_gpus == 0 and r.groups > 0]
    lead = ("no stranding for G = " + ", ".join(str(r.group_gpus) for r in best) + "; ") if best else ""
    ex.result(lead + f"G = {worst.group_gpus} leaves {worst.stranded_gpus} of {total} GPUs idle "
              f"({U.fmt_pct(worst.stranded_gpus / total)})")
    ex.note("Groups kept inside one domain so tensor or expert parallelism stays on NVLink; a group larger than "
            "the domain fits zero times and must cross the scale-out network. Stranded GPUs can still serve "
            "smaller replicas or other workloads, if the scheduler is allowed to place them there.")
    return ex.render()
