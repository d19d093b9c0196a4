"""Q108: check a multi-node vLLM 0.11 data-parallel launch before it runs: one ``vllm serve`` command
per node, as in vLLM's data-parallel deployment guide (``--data-parallel-size``,
``--data-parallel-size-local``, ``--data-parallel-start-rank``, ``--data-parallel-address``,
``--data-parallel-rpc-port``, ``--headless``).

The field that goes wrong is ``--data-parallel-start-rank``: it is the first global DP rank on this
node, that is the number of DP ranks on all earlier nodes, not the node's index. With two ranks per
node, the second node starts at 2; writing 1 makes two engines claim rank 1 and leaves rank 3 unclaimed.
The check also demands the settings every node must share (the guide: ``--enable-expert-parallel`` "on
all nodes in the multi-node case").
"""

from __future__ import annotations

from examples.mlops.skew_checks import Finding
from examples.operations.revision_pins import parse_vllm_args

SHARED = ("model", "data_parallel_size", "data_parallel_address", "data_parallel_rpc_port",
          "tensor_parallel_size", "pipeline_parallel_size", "enable_expert_parallel", "max_model_len")


# --8<-- [start:check]
def check_dp_launch(commands: list[list[str]]) -> list[Finding]:
    """``commands[i]`` is node i's argv. Returns every inconsistency that would stall the group."""
    nodes = [parse_vllm_args(argv) for argv in commands]
    out = []
    for key in SHARED:                                   # identical on every node, or absent everywhere
        values = {str(n.get(key)) for n in nodes}
        if len(values) > 1:
            out.append(Finding("shared setting", f"--{key.replace('_', '-')} differs: {sorted(values)}"))
    size = int(str(nodes[0].get("data_parallel_size", 1)))
    claimed: dict[int, int] = {}                         # global DP rank -> node that claims it
    expected_start = 0
    for i, n in enumerate(nodes):
        local = int(str(n.get("data_parallel_size_local", size)))
        start = int(str(n.get("data_parallel_start_rank", 0)))
        if local and start != expected_start:
            out.append(Finding(f"node {i}", f"--data-parallel-start-rank {start}, but nodes before it hold "
                               f"{expected_start} ranks: the start rank is that count, not the node index"))
        for r in range(start, start + local):
            if r in claimed:
                out.append(Finding(f"node {i}", f"DP rank {r} is also claimed by node {claimed[r]}"))
            claimed.setdefault(r, i)
        expected_start += local
    missing = sorted(set(range(size)) - set(claimed))
    if missing:
        out.append(Finding("group", f"DP ranks {missing} are claimed by no node: the group waits for them"))
    extra = sorted(r for r in claimed if r >= size)
    if extra:
        out.append(Finding("group", f"DP ranks {extra} are outside --data-parallel-size {size}"))
    front = [i for i, n in enumerate(nodes) if not n.get("headless")]
    if len(front) != 1 and not any(n.get("data_parallel_hybrid_lb") for n in nodes):
        # vLLM 0.11 silently infers hybrid load balancing for a node with a start rank and no --headless.
        out.append(Finding("group", f"{len(front)} nodes run an API server ({front}); internal load "
                           "balancing wants exactly one, the others --headless"))
    return out
# --8<-- [end:check]
