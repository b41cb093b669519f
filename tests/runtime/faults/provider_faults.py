"""Stand-ins for what a provider does to a run's timing: a clock that moves only when
someone sleeps, and the HTTP 429 that asks the run to wait."""

from types import SimpleNamespace


class FakeClock:
    """Seconds that pass only when someone sleeps.

    Args:
        start: The clock's reading before anyone sleeps.
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class RateLimitedError(Exception):
    """Stands in for a provider's HTTP 429 with a Retry-After header.

    Args:
        retry_after: The header's value.
        header: The header's name, as the provider spells it.
    """

    status_code = 429

    def __init__(self, retry_after: str, header: str = "retry-after") -> None:
        super().__init__("Rate limit reached for requests")
        self.response = SimpleNamespace(headers={header: retry_after})
