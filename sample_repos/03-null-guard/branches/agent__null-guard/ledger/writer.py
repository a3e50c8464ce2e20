"""Write ledger entries as CSV rows: day, account, amount, memo."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Iterable, TextIO

from ledger.defaults import MISSING_AMOUNT


@dataclass(frozen=True)
class Entry:
    """One booked line of the ledger."""

    day: str
    account: str
    cents: int | None
    memo: str = ""


def format_amount(cents: int | None) -> str:
    """Return cents as a signed decimal string; an unknown amount is an empty cell."""
    if cents is None:
        return MISSING_AMOUNT
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def entry_row(entry: Entry) -> list[str]:
    """Return the CSV cells for one entry."""
    return [entry.day, entry.account, format_amount(entry.cents), entry.memo]


def write_ledger(entries: Iterable[Entry], out: TextIO) -> int:
    """Write one CSV row per entry to `out`; return how many rows were written."""
    writer = csv.writer(out, lineterminator="\n")
    count = 0
    for entry in entries:
        if entry is None:
            continue
        writer.writerow(entry_row(entry))
        count += 1
    return count
