"""The sizing-accuracy reference table: published start-up logs against the sizing engine."""

from __future__ import annotations

from .registry import macro


def _pct(x: float | None) -> str:
    if x is None:
        return "—"
    text = f"{x * 100:+.1f}%"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def _gib(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f} GiB"


@macro("page", example="sizing_accuracy()")
def sizing_accuracy() -> str:
    """Reference page: predicted against logged start-up figures for every log in startup_logs.yaml.

    For docs/reference/sizing-accuracy.md: per log the deployment, the logged and predicted weights per
    GPU with the error, KV tokens from the logged KV memory, the engine's stated non-KV overhead
    against the flat allowance, the reason for every figure not reproduced, and the source.
    """
    from ..startup_logs import TOKENS_TOLERANCE, WEIGHTS_TOLERANCE, compare_all

    comparisons = compare_all()
    rows = ["| Log | Deployment | Weights logged | Weights predicted | Error | KV tokens (logged / from logged KV) "
            "| Non-KV overhead logged / allowance |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    act = ["| Log | Profile batch (tokens) | Activation peak logged | Estimate | Error |",
           "| --- | --- | --- | --- | --- |"]
    for i, c in enumerate(comparisons, 1):
        log, lg = c.log, c.log["logged"]
        model = log["checkpoint"] + (f" (served: {log['logged_model']})" if log["logged_model"] else "")
        dep = (f"{model}, {log['engine']} {log['engine_version']}, {log['gpu'] or log['gpu_name']} × "
               f"{log['tensor_parallel_size']}" + (f", MXFP4 {log['mxfp4_backend']}" if log["mxfp4_backend"] else ""))
        tokens = f"{lg['kv_cache_tokens']:,}" if lg["kv_cache_tokens"] is not None else "not logged"
        if c.tokens_from_logged_kv is not None:
            tokens += f" / {c.tokens_from_logged_kv:,}"
        over = c.non_kv_logged_gib
        over_cell = "—" if over is None else f"{_gib(over)} / {_gib(c.non_kv_allowance_gib)} " \
                                             f"({_pct(c.non_kv_allowance_gib / over - 1)})"
        rows.append(f"| [{i}]({log['url']}) | {dep} | {_gib(lg['weights_gib'])} | {_gib(c.weights_gib)} | "
                    f"{_pct(c.weights_error)} | {tokens} | {over_cell} |")
        if c.activation_gib is not None:
            act.append(f"| [{i}]({log['url']}) | {lg['profile_tokens']:,} | {_gib(lg['activation_gib'])} | "
                       f"{_gib(c.activation_gib)} | {_pct(c.activation_error)} |")
        for figure, why in c.gaps.items():
            notes.append(f"- [{i}] {figure.replace('_', ' ')}: {' '.join(why.split())}")
        if log["stand_in_note"]:
            notes.append(f"- [{i}] model: {' '.join(log['stand_in_note'].split())}")
    head = (f"Tolerances: weights per GPU within {WEIGHTS_TOLERANCE:.0%} of the logged \"Model loading took\" "
            f"figure; KV tokens within {TOKENS_TOLERANCE:.0%} of the logged \"GPU KV cache size\" given the "
            "logged \"Available KV cache memory\" (tokens = logged KV bytes / the engine's KV bytes per token "
            "per GPU, rounded down to whole 16-token blocks). Errors are predicted / logged − 1.")
    act_head = ("The profile run's activation peak against an estimate from the feed-forward block "
                "(`profile_mlp_activation_bytes`: batch tokens × (3 × intermediate / TP + 3 × hidden) × 2 bytes), "
                "for the logs that print it:")
    return "\n\n".join([head, "\n".join(rows), "Figures not reproduced, and why:", "\n".join(notes),
                        act_head, "\n".join(act)])
