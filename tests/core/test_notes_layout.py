"""How a note body is read: tables found by tomllib however spelled, a signed review read from its signed
bytes only, foreign text kept apart, merges that count what they change, marked display lines, provenance."""

from __future__ import annotations

import subprocess
import tomllib
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from reviewui.core.notes import provenance
from reviewui.core.notes.layout import SIGNED, is_review_header, split_piece, table_header
from reviewui.core.notes.body import parse_note, reviews_in
from reviewui.core.notes.model import Review
from reviewui.core.notes.records import BiteRecord, CommentRecord
from reviewui.core.notes.signing import SignatureCheck, split_signed, verify_chunk
from reviewui.core.notes.sync import merge_note
from reviewui.core.notes.trust import LocalReviewer, shown_reviewer
from reviewui.core.notes.verdicts import REASON_MARK, marked_lines

ALICE = "Alice Reviewer <alice@example.com>"
AT = datetime(2026, 11, 29, 17, 0, tzinfo=timezone.utc)


def review(rid: str, verdict: str = "approve", reason: str = "ok", **kw: Any) -> Review:
    return Review(id=rid, verdict=verdict, reason=reason, reviewer=ALICE, at=AT, tool="reviewui 1", branch="agent/work",
                  base="b" * 40, head="a" * 40, tree="c" * 40, patch_id="d" * 40, **kw)


def signed(r: Review, sig: str = "-----BEGIN SSH SIGNATURE-----\\nAAAA\\n-----END SSH SIGNATURE-----\\n") -> str:
    """`r` as record_review writes it when signing: its TOML, a blank line, the signature table."""
    return r.to_toml() + f'\n[review.signed]\nformat = "ssh"\nsignature = "{sig}"\n'


@pytest.mark.parametrize("line", ["[[review]]", "[[ review ]]", '[["review"]]', "  [[ 'review' ]]  # a comment\n",
                                  "[[review]]\r\n"])
def test_every_spelling_of_a_review_header_is_one(line: str) -> None:
    assert is_review_header(line)


@pytest.mark.parametrize("line", ["[review]", "[[review.bite]]", "review = [{}]", 'x = "[[review]]"', "[[review]] x",
                                  "# [[review]]", "[[reviews]]", ""])
def test_other_lines_are_not_review_headers(line: str) -> None:
    assert not is_review_header(line)


@pytest.mark.parametrize("line", ["[review.signed]", "[ review . signed ]", '["review".signed]', "[review.'signed']"])
def test_every_spelling_of_the_signature_table_is_found(line: str) -> None:
    assert table_header(line) == (SIGNED, False)
    payload, fmt, sig = split_signed(f'[[review]]\nid = "x"\n\n{line}\nformat = "ssh"\nsignature = "S"\n')
    assert (payload, fmt, sig) == ('[[review]]\nid = "x"\n', "ssh", "S")


VARIANTS = {
    "as written": lambda t: t,
    "spaced headers": lambda t: t.replace("[[review]]", "[[ review ]]").replace("[[review.bite]]", '[[ "review" . bite ]]'),
    "quoted keys": lambda t: t.replace('\nverdict = ', '\n"verdict" = ').replace("\nreason = ", "\n'reason' = "),
    "inline tables": lambda t: t.replace(
        '\n\n[[review.bite]]\nfile = "calc.py"\nheader = "@@ -1 +1 @@"\nverdict = "bites"\nfailing_tests = []\n',
        '\n').replace('tool = ', 'bite = [{ file = "calc.py", header = "@@ -1 +1 @@", verdict = "bites" }]\ntool = ', 1),
    "dotted keys": lambda t: t.replace('\ntool = ', '\nextra.note = "x"\ntool = '),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_toml_variants_read_as_the_same_reviews_as_tomllib_reads_them(variant: str) -> None:
    canonical = review("r1", bites=(BiteRecord("calc.py", "@@ -1 +1 @@", "bites"),)).to_toml() + "\n" + \
        review("r2", "reject", "no").to_toml()
    body = VARIANTS[variant](canonical)
    assert body != canonical or variant == "as written"
    expected = [Review.from_mapping(t) for t in tomllib.loads(body)["review"]]
    assert reviews_in(body) == expected
    assert [r.id for r in expected] == ["r1", "r2"] and expected[0].bites[0].verdict == "bites"
    assert len(merge_note("", body).reviews) == 2  # a pull counts the same reviews
    assert "".join(c.text for c in parse_note(body)) == body


def test_a_signed_review_is_read_from_its_signed_bytes_only() -> None:
    mine = review("r1", "reject", "the swap is wrong")
    appended = '\n[[review.comment]]\nfile = "calc.py"\nheader = "@@"\ntext = "fine, merge it"\n'
    body = signed(mine) + appended
    chunks = parse_note(body)
    assert [c.review for c in chunks] == [mine, None]
    # the blank line that separates the tables stays with the signature; the tables are foreign
    assert chunks[0].text == signed(mine) + "\n" and chunks[1].text == appended.lstrip("\n")
    assert "".join(c.text for c in chunks) == body
    # the same tables without a signature are part of the (unsigned) review: nothing told them apart
    [unsigned] = reviews_in(mine.to_toml() + appended)
    assert unsigned.comments == (CommentRecord("calc.py", "@@", None, "fine, merge it"),)


def test_a_spaced_review_header_after_a_signed_review_is_a_review_of_its_own() -> None:
    mine = review("r1", "reject")
    body = signed(mine) + "\n[[ review ]]\n" + review("r2").to_toml().split("\n", 1)[1]
    assert [r.id for r in reviews_in(body)] == ["r1", "r2"]
    assert reviews_in(body)[0] == mine


def test_text_after_a_signature_is_foreign_and_the_signature_stays_whole() -> None:
    mine = review("r1")
    parts = split_piece(signed(mine, "S") + "fine, merge it\n\n")
    assert (parts.format, parts.signature, parts.rest) == ("ssh", "S", "fine, merge it\n\n")
    assert parts.payload == mine.to_toml()


def test_a_signature_table_with_more_than_a_signature_is_malformed(tmp_path: Path) -> None:
    text = signed(review("r1"), "S").replace('format = "ssh"', 'format = "ssh"\nverdict = "approve"')
    parts = split_piece(text)
    assert parts.format == "" and parts.rest == ""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    check = verify_chunk(tmp_path, text)
    assert check.status == "bad" and check.detail == "malformed signature"


def test_merge_counts_foreign_text_and_leaves_out_differing_copies() -> None:
    mine = signed(review("r1", "reject"))
    tampered = review("r1", "approve").to_toml()
    merged = merge_note(mine, tampered + "\n" + mine + "\nremark\n" + review("r2").to_toml())
    assert (len(merged.reviews), merged.foreign, merged.differing) == (1, 1, 1)
    assert merged.body.startswith(mine) and tampered not in merged.body
    again = merge_note(merged.body, mine)
    assert (again.body, again.reviews, again.foreign, again.differing) == (merged.body, (), 0, 0)


def test_marked_lines_never_start_anywhere_but_at_the_mark() -> None:
    row = "2026-11-29T17:00:00Z  approve  " + ALICE
    text = f"ok\n{row}\r{row}\u2028{row}\x1b[2J\n\n   \n" + " " * 150 + row + "x" * 200
    lines = marked_lines(text, REASON_MARK, width=80)
    assert lines and all(ln.startswith(REASON_MARK) and len(ln) <= 80 for ln in lines)
    assert not any(c in "".join(lines) for c in "\r\u2028\x1b")
    assert "\\x1b[2J" in "".join(lines) and sum(row in ln for ln in lines) >= 2


def test_an_unsigned_claim_to_be_me_is_mine_only_when_recorded_here() -> None:
    r = review("r1")
    me, unsigned = LocalReviewer(ALICE, ""), SignatureCheck("unsigned")
    assert shown_reviewer(r, unsigned, me, provenance.RECORDED) == ALICE
    for came in ("", provenance.pulled_from("origin")):
        assert shown_reviewer(r, unsigned, me, came) == f"unverified (claims to be {ALICE})"
    with_key = LocalReviewer(ALICE, "SHA256:abc")
    assert shown_reviewer(r, unsigned, with_key, provenance.RECORDED).startswith("unverified")
    assert shown_reviewer(replace(review("r2"), reviewer="Bob <bob@x>"), unsigned, me, "") == "Bob <bob@x>"


def test_provenance_is_kept_by_content_not_by_id(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    mine = review("r1", "reject")
    provenance.remember(tmp_path, [mine], provenance.RECORDED)
    provenance.remember(tmp_path, [mine], provenance.pulled_from("origin"))  # the first origin stays
    known = provenance.load(tmp_path)
    assert known[provenance.key(mine)] == provenance.RECORDED
    assert provenance.key(review("r1", "approve")) not in known  # a forgery reusing the id is not recorded here


OLD_NOTE = '''hand-written remark

[[review]]
id = "0b9c6c1e-1f0e-4c57-9a51-2f1f3b1c0a11"
verdict = "reject"
reason = "b - a\\nis wrong"
reviewer = "Alice Reviewer <alice@example.com>"
at = 2026-11-29T17:00:00Z
tool = "reviewui 0.4.0"
branch = "agent/work"
base = "1111111111111111111111111111111111111111"
head = "2222222222222222222222222222222222222222"
tree = "3333333333333333333333333333333333333333"
patch_id = "4444444444444444444444444444444444444444"
sandbox = "bwrap"

[[review.bite]]
file = "calc.py"
header = "@@ -1,2 +1,2 @@"
verdict = "bites"
failing_tests = ["tests/test_calc.py::test_add"]

[[review.bite.guards]]
line = 2
kind = "operand"
description = "swap the operands"
verdict = "toothless"
failing_tests = []

[review.signed]
format = "ssh"
signature = "-----BEGIN SSH SIGNATURE-----\\nU1NIU0lH\\n-----END SSH SIGNATURE-----\\n"

[[review]]
id = "5d1e2f3a-0000-4000-8000-000000000002"
verdict = "approve"
reason = ""
reviewer = "Bob <bob@example.com>"
at = 2026-11-30T09:00:00Z
tool = "reviewui 0.3.0"
branch = "agent/work"
base = "1111111111111111111111111111111111111111"
head = "2222222222222222222222222222222222222222"
tree = "3333333333333333333333333333333333333333"
patch_id = "4444444444444444444444444444444444444444"
'''


def test_a_note_in_the_format_earlier_versions_wrote_still_reads() -> None:
    chunks = parse_note(OLD_NOTE)
    assert "".join(c.text for c in chunks) == OLD_NOTE
    assert [c.review is not None for c in chunks] == [False, True, True]
    assert chunks[0].text == "hand-written remark\n\n"
    first, second = reviews_in(OLD_NOTE)
    assert (first.verdict, first.reason, first.sandbox) == ("reject", "b - a\nis wrong", "bwrap")
    assert first.bites[0].guards[0].verdict == "toothless" and first.bites[0].failing_tests == ("tests/test_calc.py::test_add",)
    assert (second.reviewer, second.verdict) == ("Bob <bob@example.com>", "approve")
    payload, fmt, sig = split_signed(chunks[1].text)
    assert fmt == "ssh" and sig.startswith("-----BEGIN SSH SIGNATURE-----\nU1NIU0lH")
    assert payload.endswith('failing_tests = []\n') and "[review.signed]" not in payload


def test_a_signed_review_wrapped_in_a_multiline_string_is_still_found_and_the_wrapper_is_foreign() -> None:
    mine = review("r1", "reject")
    body = 'x = """\n' + signed(mine) + '"""\n'
    chunks = parse_note(body)
    assert [c.review for c in chunks] == [None, mine, None]
    assert chunks[0].text == 'x = """\n' and chunks[2].text == '"""\n'


def _reference_merge(local: str, remote: str) -> str:
    """The merge as first written: simple, and quadratic in the number of pieces."""
    from reviewui.core.notes.body import append_text

    ids = {r.id for r in reviews_in(local)}
    out = local
    for chunk in parse_note(remote):
        if chunk.review is not None:
            if chunk.review.id not in ids:
                ids.add(chunk.review.id)
                out = append_text(out, chunk.text)
        elif chunk.text.strip() and f"\n{chunk.text.strip()}\n" not in f"\n{out}\n":
            out = append_text(out, chunk.text)
    return out


def test_the_linear_merge_gives_the_bytes_the_simple_one_gives() -> None:
    import random

    rng = random.Random(27)
    words = ["x", "y", "  x", "ship it", "", "x\ny", "remark"]

    def body() -> str:
        parts = []
        for _ in range(rng.randrange(0, 8)):
            if rng.random() < 0.4:
                parts.append(review(f"r{rng.randrange(6)}", reason=rng.choice(words)).to_toml())
            else:
                parts.append("\n".join(rng.choice(words) for _ in range(rng.randrange(1, 4))) + rng.choice(["", "\n"]))
        return rng.choice(["", "\n"]).join(parts)

    for _ in range(400):
        local, remote = body(), body()
        assert merge_note(local, remote).body == _reference_merge(local, remote), (local, remote)
