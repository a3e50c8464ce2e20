import pytest

from retry.backoff import Policy


@pytest.fixture
def policy():
    # Generous limits so no test is cut short by a cap it is not about.
    return Policy(base_delay=0.5, max_delay=3600.0, attempts=12)
