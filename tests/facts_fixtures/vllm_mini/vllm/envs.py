import os


def env_with_choices(name, default, choices):
    return lambda: os.getenv(name, default)


environment_variables = {
    "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),
    "VLLM_LOGGING_LEVEL": lambda: os.getenv("VLLM_LOGGING_LEVEL", "INFO").upper(),
    "VLLM_WORKER_MULTIPROC_METHOD": env_with_choices("VLLM_WORKER_MULTIPROC_METHOD", "fork", ["spawn", "fork"]),
}
