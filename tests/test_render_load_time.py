"""The load_time worked example: what it shows for a NIC given in Gbit/s, and what it assumes.

Expected values are hand arithmetic, not output of the code under test.
"""
from macros.render import MACROS


def _render(**kw):
    return MACROS["load_time"]("llama-3.1-70b", **kw)


def test_network_given_in_gbit_is_shown_as_given_and_converted():
    # 8 Gbit/s / 8 bits per byte = 1 GB/s; the reader must see the 8 Gbit/s they passed in.
    out = _render(storage_gb_per_s=2, network_gbit_per_s=8)
    assert "| network bandwidth | 8 Gbit/s = 1 GB/s | given |" in out


def test_slowest_stage_sets_the_time():
    # Llama-3.1-70B config: 70,553,706,496 parameters x 2 bytes (BF16) = 141.1 GB.
    # Network at 1 GB/s is slower than storage at 2 GB/s: 141.1 GB / 1 GB/s = 141.1 s = 2.35 min.
    out = _render(storage_gb_per_s=2, network_gbit_per_s=8)
    assert "slowest stage: network at 1 GB/s" in out
    assert "2.35 min" in out
    # With a 100 Gbit/s NIC (12.5 GB/s) the 2 GB/s storage is the bottleneck: 141.1 / 2 = 70.55 s.
    out = _render(storage_gb_per_s=2, network_gbit_per_s=100)
    assert "slowest stage: storage at 2 GB/s" in out
    assert "70.6 s" in out  # 141,107,412,992 / 2e9 = 70.55 s, shown to one decimal


def test_states_the_overlap_assumption():
    # bytes / min(bandwidth) is only right when the stages stream into each other.
    out = _render(storage_gb_per_s=2, network_gbit_per_s=8, pcie_gb_per_s=25)
    assert "overlap" in out and "sum of the stage times" in out
