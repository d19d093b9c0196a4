import os


class EnvBool:
    def __init__(self, default):
        self.default = default


class EnvInt(EnvBool):
    pass


class Envs:
    SGLANG_ENABLE_TORCH_COMPILE = EnvBool(False)
    SGLANG_DETOKENIZER_MAX_STATES = EnvInt(1 << 16)


envs = Envs()
OTHER = os.environ.get("SGLANG_LEGACY_FLAG", "0")
