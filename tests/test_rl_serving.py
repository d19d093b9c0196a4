"""RL post-training and determinism (macros/formulas/rl_serving.py, macros/render/rl_serving.py; Q153,
Q154): weight-sync time, rollout-batch occupancy and slowdowns against hand arithmetic from the models'
configs, and bad input named."""

from __future__ import annotations

import pytest

from macros import formulas as F
from macros import units as U
from macros.errors import MacroInputError
from macros.render import MACROS

# Llama 3.1 70B by hand from its config.json: hidden 8192, 80 layers, 64 query / 8 KV heads of 128,
# intermediate 28672, vocabulary 128256, untied embeddings.
_L70_LAYER = (8192 * 8192 * 2 + 2 * 8192 * 1024) + 3 * 8192 * 28672 + 2 * 8192
_L70_PARAMS = 80 * _L70_LAYER + 2 * 128256 * 8192 + 8192
# Llama 3.1 8B: hidden 4096, 32 layers, 32 / 8 heads of 128, intermediate 14336, untied embeddings.
_L8_LAYER = (4096 * 4096 * 2 + 2 * 4096 * 1024) + 3 * 4096 * 14336 + 2 * 4096
_L8_PARAMS = 32 * _L8_LAYER + 2 * 128256 * 4096 + 4096


def test_hand_counts_are_the_published_sizes():
    assert _L70_PARAMS == 70_553_706_496
    assert _L8_PARAMS == 8_030_261_248


def test_weight_sync_time_by_hand():
    assert F.weight_sync_time(100e9, 50e9) == pytest.approx(2.0)
    assert F.weight_sync_time(100e9, 50e9, efficiency=0.8) == pytest.approx(2.5)
    assert F.weight_sync_time(0, 50e9) == 0


@pytest.mark.parametrize("call, match", [
    (lambda: F.weight_sync_time(-1, 1e9), "n_bytes"),
    (lambda: F.weight_sync_time(1, 0), "link_bytes_per_s"),
    (lambda: F.weight_sync_time(1, 1e9, efficiency=0), "efficiency"),
    (lambda: F.weight_sync_time(1, 1e9, efficiency=1.5), "at most 1"),
])
def test_weight_sync_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_rollout_batch_by_hand():
    b = F.rollout_batch([100, 300, 200, 1000])
    assert b.steps == 1000
    assert b.total_tokens == 1600
    assert b.mean_tokens == pytest.approx(400)
    assert b.occupancy == pytest.approx(1600 / 4000)
    assert b.idle_share == pytest.approx(0.6)
    assert b.tail_steps == 700          # 1000 - 300, the second-longest
    assert b.stretch == pytest.approx(2.5)


def test_equal_lengths_fill_every_slot():
    b = F.rollout_batch([500, 500, 500])
    assert b.occupancy == pytest.approx(1.0)
    assert b.tail_steps == 0


@pytest.mark.parametrize("lengths, match", [
    ([5], "at least two"), ([5, 0], r"lengths\[1\]"), ([5, 2.5], r"lengths\[1\]"),
])
def test_rollout_batch_bad_input_is_named(lengths, match):
    with pytest.raises(ValueError, match=match):
        F.rollout_batch(lengths)


def test_slowdown_by_hand():
    d = F.slowdown(20, 30)
    assert d.ratio == pytest.approx(1.5)
    assert d.overhead == pytest.approx(0.5)
    assert d.throughput_share == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="baseline_s"):
        F.slowdown(0, 1)


def test_weight_sync_example_by_hand():
    html = MACROS["weight_sync"]("llama-3.1-70b", gpu="h100-sxm", tp=4, nic_gbit_per_s=400, pcie_gb_per_s=50)
    full = _L70_PARAMS * 2
    assert U.fmt_gb(full) in html
    assert U.fmt_seconds(full / 450e9) in html          # H100 NVLink: 900 GB/s bidirectional, 450 each way
    assert U.fmt_seconds(full / 50e9) in html           # 400 Gbit/s = 50 GB/s
    assert U.fmt_seconds(full / 4 / 50e9) in html       # one TP shard over the NIC or over PCIe at 50 GB/s
    assert U.fmt_seconds(full / 4 / 450e9) in html
    assert "9×" in html                                 # 450 / 50
    # the shard column is only valid with one sender per receiving rank; the note must say so
    assert "no division by TP" in html


def test_weight_sync_single_gpu_has_no_shard_column():
    html = MACROS["weight_sync"]("llama-3.1-8b", gpu="h100-sxm", nic_gbit_per_s=400)
    assert "One shard" not in html
    assert U.fmt_seconds(_L8_PARAMS * 2 / 450e9) in html


def test_weight_sync_rejects_bad_efficiency_and_gpu_without_link():
    with pytest.raises(MacroInputError, match="at most 1"):
        MACROS["weight_sync"]("llama-3.1-8b", gpu="h100-sxm", nic_gbit_per_s=400, efficiency=2)
    with pytest.raises(MacroInputError, match="efficiency"):
        MACROS["weight_sync"]("llama-3.1-8b", gpu="h100-sxm", nic_gbit_per_s=400, efficiency=-1)


def test_straggler_example_by_hand():
    lengths = [900, 1100, 1400, 1700, 2000, 2600, 3900, 16384]
    html = MACROS["rollout_straggler"]("llama-3.1-8b", gpu="h100-sxm", lengths=lengths)
    # a decode step at batch 1 reads every weight except the input table, of which it looks up one row
    read = (_L8_PARAMS - 128256 * 4096 + 4096) * 2
    floor = read / 3.35e12
    assert U.fmt_seconds(floor) in html
    total = sum(lengths)
    assert U.fmt_pct(total / (8 * 16384)) in html
    assert U.fmt_seconds((16384 - 3900) * floor) in html
    assert U.fmt_seconds(16384 * floor) in html


def test_straggler_rejects_short_or_bad_lengths():
    with pytest.raises(MacroInputError, match="at least two"):
        MACROS["rollout_straggler"]("llama-3.1-8b", gpu="h100-sxm", lengths=[100])
    with pytest.raises(MacroInputError, match="lengths"):
        MACROS["rollout_straggler"]("llama-3.1-8b", gpu="h100-sxm", lengths=[100, -3])


def test_determinism_cost_by_hand():
    html = MACROS["determinism_cost"](baseline_s=26, runs=[["naive", 55], ["better attention", 42]],
                                      work="test", source="given")
    assert "2.12×" in html and "1.62×" in html        # 55 / 26, 42 / 26
    assert U.fmt_pct(16 / 26) in html                 # overhead of the better run
    assert U.fmt_pct(26 / 42) in html                 # throughput kept


@pytest.mark.parametrize("runs", [[], [["x"]], [["x", 0]], [[1, 5]]])
def test_determinism_cost_rejects_bad_rows(runs):
    with pytest.raises(MacroInputError, match="runs"):
        MACROS["determinism_cost"](baseline_s=26, runs=runs, work="w", source="s")


def test_determinism_cost_needs_its_source():
    with pytest.raises(MacroInputError, match="source"):
        MACROS["determinism_cost"](baseline_s=26, runs=[["x", 30]], work="w", source=" ")
