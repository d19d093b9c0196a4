"""Sizing formulas: pure, typed functions; inputs are plain numbers or catalog dataclasses.

Modules by topic:

- :mod:`.params`    parameter counts from a config (dense, MoE total/active, MLA)
- :mod:`.memory`    weight bytes per format (mixed formats), KV bytes (MHA/GQA/MQA, MLA, sliding
  windows, linear layers), the naive formula
- :mod:`.kvbudget`  paged blocks and their tail, the GPU memory budget left for KV, sequences and context
  it holds
- :mod:`.parallel`  valid TP degrees, per-GPU shards, TP all-reduce and EP all-to-all volume
- :mod:`.speed`     decode bandwidth bound, prefill compute time, arithmetic intensity, ridge point
- :mod:`.serving`   dynamic batching (queue delay against throughput), model instances per GPU
- :mod:`.capacity`  Little's law, replicas, Kubernetes HPA, cost per million tokens, crossover, floor
- :mod:`.mlops`     A/B sample size, experiment duration, peeking false-positive rate, build vs buy
- :mod:`.quant`     integer quantization, float-format limits, SmoothQuant, decode speed-up bound
- :mod:`.specdec`   speculative decoding expected tokens and speed-up
- :mod:`.drafter`   the acceptance a drafter needs and the KV capacity it costs
- :mod:`.adapters`  LoRA adapter size
- :mod:`.vision`    vision-encoder tokens per image
- :mod:`.transfer`  KV transfer time (disaggregated prefill), model load time
- :mod:`.slo`       error budgets and burn rates
- :mod:`.histograms` quantiles from cumulative histogram buckets (Prometheus's histogram_quantile)
- :mod:`.drift`     drift statistics: PSI and the two-sample KS statistic
- :mod:`.kubernetes` probe timings from a load time, requests and limits with headroom, CFS quota
- :mod:`.longctx`   one very long sequence: prefill MLP activation, chunks, total footprint
- :mod:`.batchsim`  static against continuous batching of a fixed set of requests, step by step
- :mod:`.blocktable` paged-KV block tables with a shared prefix block and partly filled tails
- :mod:`.engineconf` engine start-up memory ledger, TPOT-bounded batch, smallest TP per format
- :mod:`.cachesalt`  per-tenant prefix-cache salting: hit probabilities, recomputed prefill, resident copies
- :mod:`.hybridmoe` Kimi Delta Attention layers and state, latent-MoE projections, MLA output gates
- :mod:`.fleet_ops` fleet operation: TPOT, goodput, reasoning requests, admission, failure domains
- :mod:`.tuning`    tuning against targets: concurrency a target implies, batch ceiling under a step bound
- :mod:`.evalstats` paired comparison of two models on the same items (McNemar, paired interval)
- :mod:`.disagg`    fleet scale: M/D/1 prefill pool, Little's-law decode pool, pools from measured throughput
- :mod:`.wideep`    wide expert parallelism: expert layout with redundant copies, dispatch bytes, EPLB packing
- :mod:`.afd`       attention-FFN disaggregation (imported as a module: ``from macros.formulas import afd``)
- :mod:`.omni`      speech-pipeline latency, diffusion decode (imported as a module, not star-imported)
- :mod:`.kvtier`    KV tiers below the GPU: reload vs recompute, tier capacity and retention, break-even hit rate
- :mod:`.rl_serving` RL post-training: weight-sync time per link, rollout-batch occupancy, measured slowdowns

Every function documents its formula, units and assumptions, and raises ValueError on negative or
nonsensical input. Nothing here formats numbers or imports MkDocs.
"""

from .adapters import *  # noqa: F401,F403
from .serving import *  # noqa: F401,F403
from .capacity import *  # noqa: F401,F403
from .costplan import *  # noqa: F401,F403
from .drift import *  # noqa: F401,F403
from .histograms import *  # noqa: F401,F403
from .longctx import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .kvbudget import *  # noqa: F401,F403
from .checkpoint import *  # noqa: F401,F403
from .kvplan import *  # noqa: F401,F403
from .mlops import *  # noqa: F401,F403
from .parallel import *  # noqa: F401,F403
from .params import *  # noqa: F401,F403
from .slo import *  # noqa: F401,F403
from .quant import *  # noqa: F401,F403
from .specdec import *  # noqa: F401,F403
from .drafter import *  # noqa: F401,F403
from .speed import *  # noqa: F401,F403
from .kubernetes import *  # noqa: F401,F403
from .transfer import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .batchsim import *  # noqa: F401,F403
from .blocktable import *  # noqa: F401,F403
from .engineconf import *  # noqa: F401,F403
from .hybridmoe import *  # noqa: F401,F403
from .fleet_routing import *  # noqa: F401,F403
from .fleet_ops import *  # noqa: F401,F403
from .cachesalt import *  # noqa: F401,F403
from .tuning import *  # noqa: F401,F403
from .evalstats import *  # noqa: F401,F403
from .fleet_fp4 import *  # noqa: F401,F403
from .fleet_streaming import *  # noqa: F401,F403
from .disagg import *  # noqa: F401,F403
from .wideep import *  # noqa: F401,F403
from .kvtier import *  # noqa: F401,F403
from .benchread import *  # noqa: F401,F403
from .guardrails import *  # noqa: F401,F403
from .rl_serving import *  # noqa: F401,F403
