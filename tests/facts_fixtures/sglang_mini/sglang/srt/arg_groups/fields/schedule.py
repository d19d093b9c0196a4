from typing import Literal, Optional

import msgspec

from sglang.srt.arg_groups.arg_utils import A, Arg, Derived
from sglang.srt.arg_groups.choices import ATTENTION_BACKEND_CHOICES


class Schedule(msgspec.Struct):
    mem_fraction_static: A[Optional[float], "Fraction of memory for weights and the KV pool."] = None
    schedule_policy: A[Literal["fcfs", "lpm"], "How waiting requests are ordered."] = "fcfs"
    attention_backend: A[Optional[str], Arg(help="Attention kernels.", choices=ATTENTION_BACKEND_CHOICES)] = None
    tp_size: A[int, Arg(help="Tensor parallel size.", aliases=["--tensor-parallel-size"])] = 1
    model_path: A[str, Arg(help="Weights.", cli_name="--model-path", aliases=["--model"])] = ""
    internal: A[int, Arg(help="Not a flag.", no_cli=True)] = 0
    attn_tp_size = Derived(doc="Derived, not a flag.")
