"""A coding-agent harness."""
