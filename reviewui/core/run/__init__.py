"""Running the project's tests: the sandboxed runner, the warm pytest server, scratch trees, JUnit."""
