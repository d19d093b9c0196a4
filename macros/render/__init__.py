"""The sizing macros: worked examples, inline values and reference pages rendered as Markdown.

One module per topic, mirroring :mod:`macros.formulas`:

- :mod:`.params`     parameter counts
- :mod:`.memory`     weights and the KV cache
- :mod:`.budget`     the GPU memory budget and the "what fits" table
- :mod:`.parallel`   tensor and expert parallelism
- :mod:`.speed`      decode bound, prefill time, arithmetic intensity, roofline
- :mod:`.overhead`   kernel-launch share of a decode step, the throughput-vs-concurrency figure
- :mod:`.capacity`   Little's law, replicas, HPA, cost
- :mod:`.serving`    dynamic batching, model instances
- :mod:`.specdec`    speculative decoding
- :mod:`.drafter`    the acceptance a drafter needs to pay for its memory and compute
- :mod:`.adapters`   LoRA adapters
- :mod:`.vision`     vision-encoder tokens
- :mod:`.transfer`   KV transfer and model load time
- :mod:`.monitoring` error budgets, burn rates, histogram quantiles, drift statistics, QPS growth
- :mod:`.kubernetes` probe timings, requests and limits
- :mod:`.longctx`    one very long sequence: weights, its KV and the prefill activation
- :mod:`.lookups`    catalog values and links for a sentence
- :mod:`.facts`      engine facts at the reference releases: flags, defaults, environment variables, metrics
- :mod:`.reference`  the reference pages (models, GPUs, formats, prices)
- :mod:`.numbers`    the numbers-to-know sheet
- :mod:`.figures`    generated SVG figures (roofline, paged-KV block table)
- :mod:`.diagrams`   generated diagrams: paged-KV block tables, tensor-parallel all-reduces per layer
- :mod:`.batchfig`   static against continuous batching over time (worked example and chart)
- :mod:`.engineconf` start-up memory ledger, concurrency from the memory fraction, GPUs per format
- :mod:`.fleet_ops`  fleet operation: TPOT vs ITL, goodput, shedding, failure domains
- :mod:`.reasoning`  reasoning-length requests: latency, peak KV, chat against reasoning (table and figure)
- :mod:`.agentic`    agent sessions: hold, recompute or reload the KV across a tool call (table and figure)
- :mod:`.cachesalt`   the cost of salting the prefix cache per tenant
- :mod:`.disagg`     fleet scale: prefill/decode pools (and their figure), pools from measured throughput
- :mod:`.wideep`     wide expert parallelism: layout, a MoE layer across EP sizes (and its figure), EPLB balance
- :mod:`.linechart`  the small SVG line chart the fleet-scale figures share
- :mod:`.kvtier`     KV tiers: reload against recompute per tier, break-even hit rate, and its figure
- :mod:`.rl_serving` RL post-training and determinism: weight sync per link, the longest rollout, slowdowns
- :mod:`.afd`        attention-FFN disaggregation: pool ratio, traffic across the split
- :mod:`.omni`       speech pipelines' first audio, block diffusion against autoregressive decode

Shared parts: :mod:`.registry` (the ``@macro`` decorator, argument conversion by parameter name,
``MACROS``), :mod:`.inputs` (catalog lookups and value checks), :mod:`.blocks` (links, the
worked-example wrapper, number formatting). Every function here resolves catalog keys, calls the
formulas and formats the result; nothing does arithmetic of its own beyond unit conversion and
per-GPU shares. Pure Python: nothing here imports MkDocs.
"""

from __future__ import annotations

# Importing a topic module registers its macros; the order here is the order of MACROS.md.
from . import params  # noqa: F401  (each import registers the module's macros)
from . import memory  # noqa: F401
from . import budget  # noqa: F401
from . import parallel  # noqa: F401
from . import speed  # noqa: F401
from . import capacity  # noqa: F401
from . import serving  # noqa: F401
from . import mlops  # noqa: F401
from . import quant  # noqa: F401
from . import sparsity  # noqa: F401
from . import specdec  # noqa: F401
from . import drafter  # noqa: F401
from . import adapters  # noqa: F401
from . import vision  # noqa: F401
from . import transfer  # noqa: F401
from . import kubernetes  # noqa: F401
from . import longctx  # noqa: F401
from . import lookups  # noqa: F401
from . import facts  # noqa: F401
from . import monitoring  # noqa: F401
from . import overhead  # noqa: F401
from . import scaleout  # noqa: F401
from . import reference  # noqa: F401
from . import numbers  # noqa: F401
from . import figures  # noqa: F401
from . import costplan  # noqa: F401
from . import costchart  # noqa: F401
from . import diagrams  # noqa: F401
from . import batchfig  # noqa: F401
from . import engineconf  # noqa: F401
from . import nodefit  # noqa: F401
from . import fleet_routing  # noqa: F401
from . import fleet_scaling  # noqa: F401
from . import fleet_ops  # noqa: F401
from . import reasoning  # noqa: F401
from . import agentic  # noqa: F401
from . import cachesalt  # noqa: F401
from . import tuning  # noqa: F401
from . import evalstats  # noqa: F401
from . import fleet_fp4  # noqa: F401
from . import fleet_streaming  # noqa: F401
from . import disagg  # noqa: F401
from . import wideep  # noqa: F401
from . import kvtier  # noqa: F401
from . import benchread  # noqa: F401
from . import guardrails  # noqa: F401
from . import rl_serving  # noqa: F401
from . import afd  # noqa: F401
from . import omni  # noqa: F401
from . import sparse_attn  # noqa: F401
from . import kv_lowbit  # noqa: F401
from .blocks import anchor_id, catalog_href, catalog_link, example_block
from .registry import MACROS, REGISTRY, macro

__all__ = ["MACROS", "REGISTRY", "anchor_id", "catalog_href", "catalog_link", "example_block", "macro"]
