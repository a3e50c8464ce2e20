"""Read hostile note bodies at the input cap (4 MiB): parse, and merge as a pull does.

A note is read on every `log`, history screen and `notes pull`; its size is
capped, so the worst a pushed note can cost is bounded by how fast a capped
body reads. Bodies: 400k review headers with nothing in them, 1M other table
headers, 4k reviews each followed by 60 signature headers, 2.7k real
signed-looking reviews, and 10^5 reviews each followed by a remark. Target:
each body parses in <= 15 s and merges (into itself and into an empty note,
as a pull's two directions do) in <= 45 s on one core; the floor is one
tomllib call per piece.
Run: python bench/bench_notes_parse.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CAP = 4 << 20


def bodies() -> dict[str, str]:
    """The hostile bodies, each cut to the cap."""
    from datetime import datetime, timezone

    from reviewui.core.notes.model import Review

    one = Review(id="0" * 36, verdict="approve", reason="ok", reviewer="A <a@x>", at=datetime.now(timezone.utc),
                 tool="t", branch="b", base="b" * 40, head="a" * 40, tree="c" * 40, patch_id="d" * 40).to_toml()
    signed = one + '\n[review.signed]\nformat = "ssh"\nsignature = "' + "A" * 400 + '"\n\n'
    raw = {
        "empty review headers": "[[review]]\n" * 400_000,
        "other table headers": "[x]\n" * 1_100_000,
        "signature headers": ('[[review]]\nid="a"\nverdict="approve"\n\n' + "[review.signed]\n" * 60 + "\n") * 4000,
        "signed reviews": "".join(signed.replace("0" * 36, f"{i:036d}") for i in range(CAP // len(signed) + 1)),
        # each review followed by a line of its own: 10^5 foreign pieces, each checked against the merged body
        "review, remark, review": "".join(f'[[review]]\nid = "{i}"\nverdict = "approve"\n\nremark {i}\n'
                                          for i in range(CAP // 40)),
    }
    return {name: body[:CAP] for name, body in raw.items()}


def main() -> None:
    from reviewui.core.notes.body import parse_note
    from reviewui.core.notes.sync import merge_note

    for name, body in bodies().items():
        t0 = time.perf_counter()
        parse_note(body)
        t1 = time.perf_counter()
        merge_note(body, body)
        merge_note("", body)
        t2 = time.perf_counter()
        print(f"{name:24} {len(body) / 1e6:5.1f} MB  parse {t1 - t0:6.2f} s  merge {t2 - t1:6.2f} s", flush=True)


if __name__ == "__main__":
    main()
