def _declared_default(name):
    return None


class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--sampling-backend", type=str, choices=["flashinfer", "pytorch"],
                            default=_declared_default("schedule_policy"))
        parser.add_argument("--enable-metrics", action="store_true", default=False)
