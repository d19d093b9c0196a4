"""Size a vLLM deployment from the terminal: ``python -m macros.size CONFIG [vLLM flags]``.

CONFIG is a catalog model key (its shipped checkpoint from checkpoints.yaml when there is one), a
checkpoint key of checkpoints.yaml, or the path of a model's config.json. The flags are vLLM's own
names; the output is the start-up ledger as vLLM 0.33.0 logs it ("Model loading took", "Available
KV cache memory", "GPU KV cache size: N tokens, Maximum concurrency for L tokens per request:
X.XXx"), or with ``--json`` one object.

Model of the engine (each a stated simplification):

- the budget is ``--gpu-memory-utilization`` x the CUDA total of ``--gpu`` (vllm/v1/worker/utils.py
  request_memory), or ``--kv-cache-memory-bytes`` for the KV cache when given (gpu_worker.py
  determine_available_memory);
- weights per GPU: tensor parallelism splits every tensor but the replicated ones
  (macros.formulas.parallel.tp_shard); pipeline parallelism splits the layers evenly; with
  ``--enable-expert-parallel`` the routed experts are spread over TP x DP ranks; MXFP4 experts are
  padded as vLLM's kernel backend does (macros.formulas.checkpoint);
- the activation peak and runtime memory are flat allowances (2 GiB + 1 GiB per GPU), not vLLM's
  profiling run;
- "GPU KV cache size" is max concurrency x max_model_len, as vLLM 0.33.0 computes it
  (vllm/v1/core/kv_cache_utils.py get_kv_cache_capacity); concurrency = KV memory / bytes reserved
  per request of max_model_len (sliding layers: window - 1 + max_num_batched_tokens, plus a block).

Errors (a bad config.json, an unknown key or flag value) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from . import formulas as F
from .catalog import load_catalog
from .facts import defaults as _defaults

GIB = 2**30
REFERENCE = "0.33.0"


class SizeError(Exception):
    """A one-line, user-facing error (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2 (argparse prints usage and two lines by default)
        raise SizeError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m macros.size", description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="catalog model or checkpoint key, or the path of a config.json")
    p.add_argument("--gpu", default="h100-sxm", help="catalog GPU key (default h100-sxm)")
    p.add_argument("--engine", default=f"vllm=={REFERENCE}", help=f"vllm==VERSION (only {REFERENCE})")
    p.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    p.add_argument("--pipeline-parallel-size", "-pp", type=int, default=1)
    p.add_argument("--data-parallel-size", "-dp", type=int, default=1)
    p.add_argument("--enable-expert-parallel", action="store_true")
    p.add_argument("--gpu-memory-utilization", type=float, default=None)
    p.add_argument("--max-model-len", type=int, default=None)
    p.add_argument("--kv-cache-dtype", default="auto", choices=["auto", "bfloat16", "fp8", "fp8_e4m3"])
    p.add_argument("--kv-cache-memory-bytes", type=int, default=None)
    p.add_argument("--quantization", default=None, help="weight format: fp8, mxfp4, awq, gptq, bitsandbytes")
    p.add_argument("--max-num-seqs", type=int, default=None)
    p.add_argument("--max-num-batched-tokens", type=int, default=None)
    p.add_argument("--mxfp4-backend", default="triton", choices=sorted(F.MXFP4_ROUND_UP))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


_QUANT = {"fp8": "fp8", "fbgemm_fp8": "fp8", "mxfp4": "mxfp4", "awq": "int4-g128", "gptq": "int4-g128",
          "bitsandbytes": "nf4"}


def _load_model(config: str):
    """(model, quantization_config or None, format key of the rest, source) for a key or a path."""
    from .catalog.checkpoints import load_checkpoints, shipped_checkpoint

    cat = load_catalog()
    path = Path(config)
    ckpts = load_checkpoints()
    if config in ckpts and config not in cat.models and not path.exists():
        ck = ckpts[config]  # a released checkpoint by its own key (llama-3.1-405b-instruct-fp8)
        return cat.model(ck.model), dict(ck.quantization_config or {}), ck.torch_dtype, f"checkpoint {ck.hf_repo}"
    if config in cat.models and not path.exists():
        m = cat.model(config)
        ck = shipped_checkpoint(config)
        if ck is not None:
            return m, dict(ck.quantization_config or {}), ck.torch_dtype, f"checkpoint {ck.hf_repo}"
        return m, None, m.released_format, f"catalog {m.key} ({m.released_format})"
    if not path.exists():
        raise SizeError(f"{config}: neither a catalog model key nor a file "
                        f"(keys: {', '.join(sorted(cat.models)[:6])}, ...)")
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SizeError(f"{path}: not a readable JSON file ({exc})") from None
    from sitebuild.hfconfig import parse_config  # the calculator's reader, shared

    res = parse_config(cfg)
    if res["errors"]:
        field, why = res["errors"][0]
        raise SizeError(f"{path}: {field}: {why}")
    qc = cfg.get("quantization_config") if isinstance(cfg, dict) else None
    rest = "bf16"
    return res["model"], (qc if isinstance(qc, dict) else None), rest, f"config {path}"


def size(argv: list[str]) -> dict:
    """Parse ``argv`` and compute the ledger; raises :class:`SizeError` on bad input."""
    a = _parser().parse_args(argv)
    if a.engine != f"vllm=={REFERENCE}":
        raise SizeError(f"--engine: {a.engine!r} is not modelled; the reference release is vllm=={REFERENCE}")
    cat = load_catalog()
    if a.gpu not in cat.gpus:
        raise SizeError(f"--gpu: {a.gpu!r} is not a catalog GPU (valid: {', '.join(sorted(cat.gpus))})")
    g = cat.gpu(a.gpu)
    for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
        if getattr(a, name) < 1:
            raise SizeError(f"--{name.replace('_', '-')}: must be >= 1, got {getattr(a, name)}")
    util = a.gpu_memory_utilization if a.gpu_memory_utilization is not None \
        else _defaults.gpu_memory_utilization().value
    if not 0 < util <= 1:
        raise SizeError(f"--gpu-memory-utilization: must be in (0, 1], got {util}")
    m, qc, rest, source = _load_model(a.config)
    if a.quantization is not None:
        if a.quantization not in _QUANT:
            raise SizeError(f"--quantization: {a.quantization!r} not modelled (valid: {', '.join(sorted(_QUANT))})")
        qc = {"quant_method": a.quantization} if a.quantization != "bitsandbytes" else \
            {"quant_method": "bitsandbytes", "load_in_4bit": True}
        if a.quantization in ("awq", "gptq"):
            qc.update(bits=4, group_size=128)
    tp, pp, dp = a.tensor_parallel_size, a.pipeline_parallel_size, a.data_parallel_size
    problem = F.tp_problem(m.num_attention_heads, m.num_key_value_heads if m.mla is None else 1, tp)
    if problem:
        raise SizeError(f"--tensor-parallel-size: {problem}")
    if m.num_hidden_layers % pp:
        raise SizeError(f"--pipeline-parallel-size: {pp} does not divide num_hidden_layers {m.num_hidden_layers}")
    max_len = a.max_model_len or m.max_position_embeddings
    if max_len < 1:
        raise SizeError(f"--max-model-len: must be >= 1, got {max_len}")
    mnbt = a.max_num_batched_tokens or F.DEFAULT_MAX_NUM_BATCHED_TOKENS
    kv = cat.format("fp8" if a.kv_cache_dtype.startswith("fp8") else "bf16")

    try:
        wb = F.checkpoint_weight_bytes(m, qc, cat.format, rest)
    except F.QuantConfigError as exc:
        raise SizeError(f"{a.config}: {exc}") from None
    experts = wb.routed_experts
    if (qc or {}).get("quant_method") == "mxfp4" and m.moe is not None:
        experts = F.vllm_mxfp4_expert_bytes(m, a.mxfp4_backend)
    # the rest split by TP plus what vLLM replicates (priced at 2 bytes: attention, router, norms)
    replicated = sum(F.tp_replicated_extra_params(m, tp).values()) * 2
    expert_ranks = tp * dp if a.enable_expert_parallel else tp
    weights_gpu = ((wb.embeddings + wb.rest) / tp + replicated + experts / expert_ranks) / pp
    requested = math.ceil(g.engine_memory_bytes * util)
    allowances = F.DEFAULT_ACTIVATION_BYTES + F.DEFAULT_RUNTIME_RESERVE_BYTES
    reasons: list[str] = []
    over_total = False
    if a.kv_cache_memory_bytes is not None:
        if a.kv_cache_memory_bytes < 1:
            raise SizeError(f"--kv-cache-memory-bytes: must be >= 1, got {a.kv_cache_memory_bytes}")
        kv_bytes = float(a.kv_cache_memory_bytes)
        over_total = weights_gpu + allowances + kv_bytes > g.engine_memory_bytes
        if over_total:
            reasons.append("weights, allowances and --kv-cache-memory-bytes exceed the GPU's CUDA total")
    else:
        kv_bytes = requested - weights_gpu - allowances
    frac = F.kv_fraction_per_gpu(m, tp) / pp
    per_token = F.kv_bytes_per_token(m, kv) * frac
    per_request = F.kv_bytes_per_request_reserved(m, max_len, kv, F.DEFAULT_BLOCK_SIZE, mnbt, True, frac)
    concurrency = kv_bytes / per_request if kv_bytes > 0 else 0.0
    if kv_bytes <= 0:
        reasons.append(f"does not load: the weights need {weights_gpu / GIB:.2f} GiB per GPU, the engine may use "
                       f"{requested / GIB:.2f} GiB and keeps {allowances / GIB:.0f} GiB for activations and runtime")
    elif concurrency < 1:
        reasons.append(f"one request of {max_len:,} tokens needs {per_request / GIB:.2f} GiB of KV cache, "
                       f"{kv_bytes / GIB:.2f} GiB is available: lower --max-model-len")
    if a.max_num_seqs is not None and concurrency >= 1 and a.max_num_seqs > concurrency:
        reasons.append(f"--max-num-seqs {a.max_num_seqs} exceeds the {concurrency:.2f} full-length requests the "
                       "KV cache holds (shorter requests may still fit)")
    fits = kv_bytes > 0 and concurrency >= 1 and not over_total
    return {
        "model": m.key, "source": source, "gpu": g.key, "engine": a.engine,
        "tensor_parallel_size": tp, "pipeline_parallel_size": pp, "data_parallel_size": dp,
        "enable_expert_parallel": a.enable_expert_parallel, "gpu_memory_utilization": util,
        "max_model_len": max_len, "kv_cache_dtype": kv.key,
        "cuda_total_bytes": g.engine_memory_bytes, "requested_bytes": requested,
        "weights_bytes_per_gpu": weights_gpu, "kv_bytes_per_token_per_gpu": per_token,
        "kv_cache_bytes_per_gpu": kv_bytes,
        "kv_cache_tokens": int(concurrency * max_len) if kv_bytes > 0 else 0,
        "max_concurrency": concurrency, "fits": fits, "reasons": reasons,
    }


def ledger(r: dict) -> str:
    """The result as vLLM 0.33.0 logs it at start-up (one GPU's figures)."""
    lines = [f"Model loading took {round(r['weights_bytes_per_gpu'] / GIB, 2)} GiB memory",
             f"Available KV cache memory: {round(r['kv_cache_bytes_per_gpu'] / GIB, 2)} GiB"]
    if r["kv_cache_bytes_per_gpu"] > 0:
        lines.append(f"GPU KV cache size: {r['kv_cache_tokens']:,} tokens, Maximum concurrency for "
                     f"{r['max_model_len']:,} tokens per request: {r['max_concurrency']:.2f}x")
    lines.append("starts" if r["fits"] else "does not start")
    lines += [f"  {x}" for x in r["reasons"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        r = size(sys.argv[1:] if argv is None else argv)
    except SizeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(r, indent=2) if "--json" in (sys.argv[1:] if argv is None else argv) else ledger(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
