from scripts.bench import reject_github_tokens_in_prompt, run


def test_run_row_after_a_finished_run():
    row = run("add a field to the row")
    assert row["done"] is True
    assert row["steps"] == 1
    assert row["summary"] == "echo: add a field to the row"
