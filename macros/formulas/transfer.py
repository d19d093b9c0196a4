"""Moving bytes: KV transfer for disaggregated prefill, model load time.

Bandwidths are decimal bytes per second and per direction (a link sold as "900 GB/s bidirectional"
moves 450 GB/s each way).
"""

from __future__ import annotations

from . import _checks as chk

__all__ = ["transfer_time", "kv_transfer_time", "model_load_time", "image_pull_time"]


def transfer_time(n_bytes: float, bandwidth_bytes_per_s: float, latency_s: float = 0.0) -> float:
    """Seconds to move ``n_bytes``: ``latency + bytes / bandwidth``."""
    chk.non_negative("n_bytes", n_bytes)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    chk.non_negative("latency_s", latency_s)
    return latency_s + n_bytes / bandwidth_bytes_per_s


def kv_transfer_time(prompt_kv_bytes: float, link_bytes_per_s: float, latency_s: float = 0.0) -> float:
    """Disaggregated prefill: time to ship a prompt's KV from the prefill to the decode worker.

    ``KV bytes of the prompt / link bandwidth`` (+ latency). Assumes the transfer is not overlapped
    with prefill compute (layer-by-layer streaming hides part of it).
    """
    return transfer_time(prompt_kv_bytes, link_bytes_per_s, latency_s)


def model_load_time(weight_bytes: float, storage_bytes_per_s: float, network_bytes_per_s: float | None = None,
                    pcie_bytes_per_s: float | None = None) -> float:
    """Cold-start weight loading: ``bytes / min(storage, network, PCIe)`` seconds.

    The slowest stage of the path bounds the stream; stages given as ``None`` are not on the path.
    Excludes process start, CUDA context, compilation and CUDA-graph capture.
    """
    chk.non_negative("weight_bytes", weight_bytes)
    rates = [chk.positive("storage_bytes_per_s", storage_bytes_per_s)]
    if network_bytes_per_s is not None:
        rates.append(chk.positive("network_bytes_per_s", network_bytes_per_s))
    if pcie_bytes_per_s is not None:
        rates.append(chk.positive("pcie_bytes_per_s", pcie_bytes_per_s))
    return weight_bytes / min(rates)


def image_pull_time(compressed_bytes: float, unpacked_bytes: float, network_bytes_per_s: float,
                    unpack_bytes_per_s: float) -> float:
    """Cold image pull onto a node: ``compressed / network + unpacked / unpack rate`` seconds.

    Download of the compressed layers, then decompression and extraction of the unpacked bytes into the
    snapshotter; taken one after the other, which bounds a pull whose layers do not overlap (a single
    large layer). Overlap between layers, or a lazy-pulling snapshotter, shortens it.
    """
    chk.non_negative("compressed_bytes", compressed_bytes)
    chk.non_negative("unpacked_bytes", unpacked_bytes)
    if compressed_bytes > unpacked_bytes:
        raise ValueError(f"compressed_bytes ({compressed_bytes:g}) exceeds unpacked_bytes ({unpacked_bytes:g}): "
                         "a compressed layer is not larger than its content here")
    chk.positive("network_bytes_per_s", network_bytes_per_s)
    chk.positive("unpack_bytes_per_s", unpack_bytes_per_s)
    return compressed_bytes / network_bytes_per_s + unpacked_bytes / unpack_bytes_per_s
