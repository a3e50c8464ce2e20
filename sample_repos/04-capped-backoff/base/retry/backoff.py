"""Exponential back-off between retries."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    """How long to wait between attempts."""

    base_delay: float = 0.5
    max_delay: float = 30.0
    attempts: int = 5


def next_delay(policy: Policy, attempt: int) -> float:
    """Seconds to wait before retry number `attempt` (0 is the first retry)."""
    if attempt < 0:
        raise ValueError("attempt must be 0 or more")
    return policy.base_delay * 2**attempt
