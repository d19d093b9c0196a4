from prometheus_client import Gauge


class Collector:
    def __init__(self):
        self.running = Gauge(name="sglang:num_running_reqs", documentation="Running requests.")
