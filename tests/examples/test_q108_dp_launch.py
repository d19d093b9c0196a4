"""Q108: examples/operations/dp_launch.py on the two-node launch of vLLM's data-parallel guide
(DP=4, two ranks per node) and on the mistakes made when copying it."""

from __future__ import annotations

from examples.operations.dp_launch import check_dp_launch

COMMON = ["--data-parallel-size", "4", "--data-parallel-size-local", "2",
          "--data-parallel-address", "10.99.48.128", "--data-parallel-rpc-port", "13345"]
NODE0 = ["vllm", "serve", "org/m", *COMMON]
NODE1 = ["vllm", "serve", "org/m", "--headless", *COMMON, "--data-parallel-start-rank", "2"]


def test_the_guide_launch_is_consistent() -> None:
    assert check_dp_launch([NODE0, NODE1]) == []


def test_start_rank_written_as_node_index() -> None:
    node1 = [x if x != "2" or i != len(NODE1) - 1 else "1" for i, x in enumerate(NODE1)]
    assert node1[-1] == "1"
    found = [str(f) for f in check_dp_launch([NODE0, node1])]
    # Node 1 claims ranks 1 and 2: rank 1 twice, rank 3 never.
    assert found == [
        "node 1: --data-parallel-start-rank 1, but nodes before it hold 2 ranks: "
        "the start rank is that count, not the node index",
        "node 1: DP rank 1 is also claimed by node 0",
        "group: DP ranks [3] are claimed by no node: the group waits for them",
    ]


def test_three_nodes_cumulative_start_ranks() -> None:
    six = ["--data-parallel-size", "6", "--data-parallel-size-local", "2",
           "--data-parallel-address", "10.0.0.1", "--data-parallel-rpc-port", "13345"]
    nodes = [["vllm", "serve", "org/m", *six],
             ["vllm", "serve", "org/m", "--headless", *six, "--data-parallel-start-rank", "2"],
             ["vllm", "serve", "org/m", "--headless", *six, "--data-parallel-start-rank", "4"]]
    assert check_dp_launch(nodes) == []
    nodes[2][-1] = "2"                                   # the third node copied the second's command
    found = [str(f) for f in check_dp_launch(nodes)]
    assert "node 2: DP rank 2 is also claimed by node 1" in found
    assert "group: DP ranks [4, 5] are claimed by no node: the group waits for them" in found


def test_settings_that_must_match_and_the_single_front_end() -> None:
    node1 = [*NODE1, "--enable-expert-parallel"]          # set on one node only
    found = [str(f) for f in check_dp_launch([NODE0, node1])]
    assert found == ["shared setting: --enable-expert-parallel differs: ['None', 'True']"]
    no_headless = [x for x in NODE1 if x != "--headless"]
    found = [str(f) for f in check_dp_launch([NODE0, no_headless])]
    assert found == ["group: 2 nodes run an API server ([0, 1]); internal load balancing wants exactly one, "
                     "the others --headless"]
    # Declared hybrid load balancing: one API server per node is intended.
    assert check_dp_launch([[*NODE0, "--data-parallel-hybrid-lb"], [*no_headless, "--data-parallel-hybrid-lb"]]) == []
