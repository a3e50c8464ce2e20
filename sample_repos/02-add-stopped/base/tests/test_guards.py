import pytest

from vibe.guards import check_prompt, has_github_token

TOKEN = "ghp_" + "a1B2" * 9


def test_token_is_detected():
    assert has_github_token(f"use {TOKEN} to push")


def test_lookalike_is_not_a_token():
    assert not has_github_token("ghp_short and github_token=None")


def test_check_prompt_refuses_a_token():
    with pytest.raises(ValueError):
        check_prompt(f"deploy with {TOKEN}")
