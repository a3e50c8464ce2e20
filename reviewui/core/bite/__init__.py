"""Bite-checks: select the tests, revert one hunk in a scratch tree, grade and report."""
