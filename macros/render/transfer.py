"""Moving bytes: KV transfer between prefill and decode, model load time
(formulas: :mod:`macros.formulas.transfer`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink
from .registry import macro


@macro("block", example='kv_transfer("llama-3.1-70b", context="8K", link_gbit_per_s=400)')
def kv_transfer(model: Model, context: int = 8192, kv_dtype: Format = "bf16", gpu: Gpu | None = None,
                link_gb_per_s: float | None = None, link_gbit_per_s: float | None = None) -> str:
    """Worked example: disaggregated prefill, KV bytes of the prompt / link bandwidth.

    Give exactly one of `gpu` (its interconnect, per direction), `link_gb_per_s` (GB/s) or
    `link_gbit_per_s` (e.g. 400 for a 400G NIC).
    """
    m, kv, ctx = model, kv_dtype, context
    given = [x is not None for x in (gpu, link_gb_per_s, link_gbit_per_s)]
    if sum(given) != 1:
        raise MacroInputError("kv_transfer needs exactly one of gpu (its interconnect), link_gb_per_s (GB/s) "
                              "or link_gbit_per_s (Gbit/s, e.g. 400 for a 400G NIC)")
    if gpu is not None:
        g = gpu
        bw = g.interconnect_bytes_per_s_per_direction
        if not bw:
            raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml")
        bw_src = _glink(g)
    elif link_gb_per_s is not None:
        bw, bw_src = link_gb_per_s * 1e9, GIVEN
    else:
        bw, bw_src = link_gbit_per_s * 1e9 / 8, GIVEN
    nbytes = F.kv_bytes_per_sequence(m, ctx, kv)
    t = F.kv_transfer_time(nbytes, bw)
    ex = Example(f"KV transfer of a {_i(ctx)}-token prompt of {m.name}")
    ex.formula("transfer time = KV bytes of the prompt / link bandwidth (one direction)")
    ex.input("KV bytes per token", U.fmt_bytes(F.kv_bytes_per_token(m, kv)), f"{_mlink(m)}, {_flink(kv)}")
    ex.input("prompt length", f"{_i(ctx)} tokens", GIVEN)
    ex.input("link bandwidth per direction", U.fmt_bandwidth(bw), bw_src)
    ex.step(f"KV of the prompt: {U.fmt_bytes(nbytes)}")
    ex.step(f"{_i(nbytes)} bytes / {U.fmt_bandwidth(bw)} = {U.fmt_seconds(t)}")
    ex.result(f"{U.fmt_seconds(t)} to move the prompt's KV cache")
    ex.note("Not overlapped with prefill; layer-by-layer streaming hides part of it. Link setup latency excluded.")
    return ex.render()


@macro("block", example='load_time("llama-3.1-70b", storage_gb_per_s=2, network_gbit_per_s=100, pcie_gb_per_s=25)')
def load_time(model: Model, storage_gb_per_s: float, fmt: Format = "bf16", network_gbit_per_s: float | None = None,
              pcie_gb_per_s: float | None = None, expert_fmt: Format | None = None) -> str:
    """Worked example: cold-start weight load = bytes / min(storage, network, PCIe) bandwidth.

    Assumes the stages overlap (a streaming loader); the example says so. The network is given in
    Gbit/s and shown with its GB/s value.
    """
    m, f = model, fmt
    nbytes = F.weight_bytes(m, f, expert_fmt)
    storage = storage_gb_per_s * 1e9
    network = network_gbit_per_s * 1e9 / 8 if network_gbit_per_s is not None else None
    pcie = pcie_gb_per_s * 1e9 if pcie_gb_per_s is not None else None
    t = F.model_load_time(nbytes, storage, network, pcie)
    stages = [("storage", storage), ("network", network), ("PCIe", pcie)]
    stages = [(n, b) for n, b in stages if b is not None]
    slowest = min(stages, key=lambda s: s[1])
    ex = Example(f"loading {m.name} ({f.name})")
    ex.formula("load time = weight bytes / min(storage, network, PCIe bandwidth)")
    ex.input("weights", U.fmt_gb(nbytes), f"{_mlink(m)}, {_flink(f)}")
    for name, bw in stages:
        # a NIC is specified in Gbit/s: show the value as given next to its GB/s conversion
        shown = (f"{network_gbit_per_s:g} Gbit/s = {U.fmt_bandwidth(bw)}" if name == "network"
                 else U.fmt_bandwidth(bw))
        ex.input(f"{name} bandwidth", shown, GIVEN)
    ex.step(f"slowest stage: {slowest[0]} at {U.fmt_bandwidth(slowest[1])}")
    ex.step(f"{U.fmt_gb(nbytes)} / {U.fmt_bandwidth(slowest[1])} = {U.fmt_seconds(t)}")
    ex.result(f"{U.fmt_seconds(t)} to stream the weights")
    ex.note("Assumes the stages overlap (a streaming loader), so the slowest one sets the pace; a loader "
            "that finishes each stage before starting the next pays the sum of the stage times. "
            "Excludes process start, CUDA context, compilation and CUDA-graph capture.")
    return ex.render()


@macro("block", example='image_pull(image_gb=6, image_unpacked_gb=14, network_gbit_per_s=10, unpack_gb_per_s=0.5, '
                        'model="llama-3.1-8b")')
def image_pull(image_gb: float, image_unpacked_gb: float, network_gbit_per_s: float, unpack_gb_per_s: float,
               model: Model | None = None, fmt: Format = "bf16") -> str:
    """Worked example: cold image pull = compressed bytes / network + unpacked bytes / unpack rate.

    `image_gb` and `image_unpacked_gb` are the serving image without weights (compressed as stored in the
    registry, and unpacked on disk). With `model`, its weights are baked in as an extra layer, taken as
    incompressible (counted at full size in both sums).
    """
    if image_gb > image_unpacked_gb:
        raise MacroInputError(f"image_pull: image_gb ({image_gb:g}) is the compressed size and cannot exceed "
                              f"image_unpacked_gb ({image_unpacked_gb:g})")
    compressed, unpacked = image_gb * 1e9, image_unpacked_gb * 1e9
    weights = F.weight_bytes(model, fmt, None) if model is not None else 0.0
    compressed += weights
    unpacked += weights
    net = network_gbit_per_s * 1e9 / 8
    unpack = unpack_gb_per_s * 1e9
    t_dl, t_un = compressed / net, unpacked / unpack
    t = F.image_pull_time(compressed, unpacked, net, unpack)
    title = f"pulling a serving image with {model.name} ({fmt.name}) baked in" if model is not None \
        else "pulling a serving image without weights"
    ex = Example(title)
    ex.formula("pull time = compressed bytes / network bandwidth + unpacked bytes / unpack rate")
    ex.input("image layers, compressed / unpacked", f"{U.fmt_gb(image_gb * 1e9)} / {U.fmt_gb(image_unpacked_gb * 1e9)}",
             GIVEN)
    if model is not None:
        ex.input("weights layer (taken as incompressible)", U.fmt_gb(weights), f"{_mlink(model)}, {_flink(fmt)}")
    ex.input("network bandwidth", f"{network_gbit_per_s:g} Gbit/s = {U.fmt_bandwidth(net)}", GIVEN)
    ex.input("decompress and extract rate", U.fmt_bandwidth(unpack), GIVEN)
    ex.step(f"download: {U.fmt_gb(compressed)} / {U.fmt_bandwidth(net)} = {U.fmt_seconds(t_dl)}")
    ex.step(f"unpack: {U.fmt_gb(unpacked)} / {U.fmt_bandwidth(unpack)} = {U.fmt_seconds(t_un)}")
    ex.result(f"{U.fmt_seconds(t)} before the container can start")
    ex.note("Download and unpack taken one after the other, as for one large layer; overlap across layers "
            "hides part of the sum, a lazy-pulling snapshotter defers most of it. Excludes registry latency, "
            "kubelet pull queueing and the engine's own load from disk afterwards.")
    return ex.render()
