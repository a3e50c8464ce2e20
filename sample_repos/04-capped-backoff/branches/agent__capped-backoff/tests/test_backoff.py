import pytest

from retry.backoff import Policy, next_delay


def test_first_retry_waits_the_base_delay(policy):
    assert next_delay(policy, 0) == 0.5


def test_delay_doubles(policy):
    assert next_delay(policy, 3) == 4.0


def test_negative_attempt_is_refused(policy):
    with pytest.raises(ValueError):
        next_delay(policy, -1)


def test_default_policy():
    assert Policy().max_delay == 30.0


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [(0, 0.5), (1, 1.0), (2, 2.0), (4, 8.0), (8, 128.0), (11, 1024.0)],
)
def test_delay_is_capped(policy, attempt, expected):
    assert next_delay(policy, attempt) == expected
    assert next_delay(policy, attempt) <= policy.max_delay
