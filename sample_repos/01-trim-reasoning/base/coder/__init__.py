"""A small agentic coder loop."""
