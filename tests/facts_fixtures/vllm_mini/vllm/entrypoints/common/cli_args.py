from vllm.engine.arg_utils import get_kwargs


class BaseFrontendArgs:
    uvicorn_log_level: str = "info"

    @classmethod
    def add_cli_args(cls, parser):
        frontend_kwargs = get_kwargs(cls)
        for key, value in frontend_kwargs.items():
            extra_flags = value.pop("flags", [])
            parser.add_argument(*extra_flags, f"--{key.replace('_', '-')}", **value)
        return parser


class FrontendArgs(BaseFrontendArgs):
    port: int = 8000
    disable_fastapi_docs: bool = False
