from typing import Literal

QuantizationMethods = Literal[
    "awq",
    "fp8",
    "fbgemm_fp8",
]

DEPRECATED_QUANTIZATION_METHODS = ["fbgemm_fp8"]
