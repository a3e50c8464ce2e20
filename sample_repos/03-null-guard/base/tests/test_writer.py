import io

from ledger.writer import Entry, entry_row, format_amount, write_ledger


def test_format_amount_positive():
    assert format_amount(1250) == "12.50"


def test_format_amount_negative_and_small():
    assert format_amount(-5) == "-0.05"


def test_format_amount_unknown_is_empty():
    assert format_amount(None) == ""


def test_entry_row_cells():
    row = entry_row(Entry("2024-03-01", "cash", 1250, "lunch"))
    assert row == ["2024-03-01", "cash", "12.50", "lunch"]


def test_entry_row_pending_amount():
    row = entry_row(Entry("2024-03-02", "bank", None, "pending"))
    assert row[2] == ""


def test_write_ledger_rows():
    out = io.StringIO()
    entries = [Entry("2024-03-01", "cash", 1250, "lunch"), Entry("2024-03-02", "bank", None, "pending")]
    assert write_ledger(entries, out) == 2
    assert out.getvalue() == "2024-03-01,cash,12.50,lunch\n2024-03-02,bank,,pending\n"
