ATTENTION_BACKEND_CHOICES = [
    "flashinfer",
    "fa3",
    "triton",
]

QUANTIZATION_CHOICES = ["fp8", "awq"]
