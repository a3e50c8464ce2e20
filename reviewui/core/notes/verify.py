"""`reviewui verify`: the merge check only a reviewer's signed verdict opens.

A branch passes when, for each required reviewer (by default: any one), the
verdict relation (relation.py) finds a current approve signed by a key the
**base** lists: the allowed-signers file named by `verify-signers` in the
base branch's committed config (`.reviewui.toml` or `[tool.reviewui]`), read
from the base's own tree, so no branch can add itself. Its ssh lines are
git's allowed-signers format (`gpg.ssh.allowedSignersFile`); a line
`PRINCIPAL openpgp FINGERPRINT` lists an OpenPGP key (checked with the
keyring gpg uses; the list, not the web of trust, decides). Only signatures
count here: an unsigned review, even one this clone recorded, never passes;
each reviewer's latest signed verdict stands, and a current reject by a
listed signer stands against the branch. "Current" means the review judged
this head, or an earlier one whose verbatim patch id equals base..head's
now: a rebase that changed no byte of the patch (patchid.py).
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from reviewui.core.errors import ReviewError
from reviewui.core.notes.patchid import patch_id
from reviewui.core.notes.relation import BranchVerdicts, Trust, WeighedReview, branch_verdicts
from reviewui.core.notes.signing import Signers
from reviewui.core.notes.trust import LocalReviewer, email_of

CONFIG_KEY = "verify-signers"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://pypi.org/project/reviewui/verdict/v1"
"""The in-toto predicate type of a reviewui verdict."""
MAX_SIGNERS_BYTES = 1024 * 1024


@dataclass(frozen=True)
class AllowedSigners:
    """The base's allowed signers: ssh lines for ssh-keygen, OpenPGP fingerprints with their principals."""

    path: str
    """Where the file sits in the base's tree."""
    ssh: str
    """Its ssh lines (git's allowed-signers format)."""
    openpgp: dict[str, str]
    """Fingerprint (upper case) -> principal, from `PRINCIPAL openpgp FINGERPRINT` lines."""


def allowed_signers(repo_dir: str | Path, base: str) -> AllowedSigners:
    """The allowed signers the base commit's config names (`verify-signers`), read from its tree.

    Raises ReviewError when the base names none, or the file is absent there or too large.
    """
    from reviewui.core.config import repo_config_at
    from reviewui.core.git import show_file

    name = repo_config_at(repo_dir, base).get(CONFIG_KEY)
    if not isinstance(name, str) or not name.strip():
        raise ReviewError(f"the base has no {CONFIG_KEY} in its .reviewui.toml or [tool.reviewui]: "
                          "nothing names whose signature opens the check")
    data = show_file(repo_dir, base, name.strip().lstrip("/"), cap=MAX_SIGNERS_BYTES)
    if data is None:
        raise ReviewError(f"{CONFIG_KEY} names {name}, which the base's tree does not hold")
    if len(data) > MAX_SIGNERS_BYTES:
        raise ReviewError(f"{name} is larger than {MAX_SIGNERS_BYTES:,} bytes; not read")
    ssh: list[str] = []
    openpgp: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        words = line.split()
        if len(words) >= 3 and words[1].lower() == "openpgp" and not line.lstrip().startswith("#"):
            openpgp[words[2].upper().removeprefix("0X")] = words[0]
        else:
            ssh.append(line)
    return AllowedSigners(name.strip(), "\n".join(ssh) + "\n", openpgp)


@dataclass(frozen=True)
class VerifyReport:
    """What `verify` found: whether the check opens, and every review as it counts for it."""

    ok: bool
    branch: str
    base: str
    """The merge-base the patch is taken from."""
    head: str
    patch_id: str
    """The verbatim patch id of base..head."""
    required: tuple[str, ...]
    """The reviewers asked for (empty: any one)."""
    reviews: tuple[WeighedReview, ...]
    missing: tuple[str, ...]
    """One line per piece missing (empty when `ok`)."""
    approvals: tuple[WeighedReview, ...]
    """The approves that open the check (one per required reviewer, or the latest)."""
    principals: dict[str, str]
    """Review id -> the listed principal its signature is by."""

    def reviewer(self, w: WeighedReview) -> str:
        """Whom a review counts as: the principal its trusted signature is listed under, else its claim."""
        return self.principals.get(w.review.id) or w.review.reviewer

    def to_json(self) -> dict[str, Any]:
        """`{ok, head, patch_id, required, reviews: [{reviewer, verdict, signature, provenance, current, reason,
        …}], missing}`."""
        return {
            "ok": self.ok, "branch": self.branch, "base": self.base, "head": self.head, "patch_id": self.patch_id,
            "required": list(self.required),
            "reviews": [{"id": w.review.id, "reviewer": self.reviewer(w), "claims": w.review.reviewer,
                         "verdict": w.review.verdict, "signature": w.signature, "provenance": w.provenance,
                         "current": w.current, "reason": w.review.reason, "head": w.review.head,
                         "at": w.review.at_iso(), "counts": w.counts and w.signature == "trusted",
                         "why_not": _why_not(w)} for w in self.reviews],
            "missing": list(self.missing),
        }

    def to_text(self) -> str:
        """`ok: …` or one line per missing piece."""
        if self.ok:
            who = ", ".join(sorted({self.reviewer(w) for w in self.approvals}))
            return f"ok: {self.branch} @ {self.head[:12]} approved by {who} (signed, current)"
        return "\n".join(self.missing)

    def to_in_toto(self) -> dict[str, Any]:
        """The verdict as an in-toto Statement v1 about the head commit."""
        approve = self.approvals[-1] if self.approvals else None
        r = approve.review if approve else None
        return {
            "_type": STATEMENT_TYPE,
            "subject": [{"name": self.branch, "digest": {"gitCommit": self.head}}],
            "predicateType": PREDICATE_TYPE,
            "predicate": {
                "verdict": "approve" if self.ok else "none",
                "reviewer": self.reviewer(approve) if approve else None,
                "reviewers": sorted({self.reviewer(w) for w in self.approvals}),
                "base": self.base,
                "head": self.head,
                "patchId": self.patch_id,
                "reviewedHead": r.head if r else None,
                "signature": approve.check.key if approve else None,
                "reviewedAt": r.at_iso() if r else None,
                "evidence": evidence_summary(approve) if approve else None,
                "missing": list(self.missing),
            },
        }


def evidence_summary(w: WeighedReview) -> dict[str, Any]:
    """What the approving review's own (signed) record says of its evidence, counted."""
    r = w.review
    graded = [b.verdict for b in r.bites if b.verdict not in ("not-code", "skipped")]
    graded += [g.verdict for b in r.bites for g in b.guards if g.verdict not in ("not-code", "skipped")]
    return {
        "bites": sum(v == "bites" for v in graded), "graded": len(graded),
        "toothless": sum(v in ("toothless", "uncovered") for v in graded),
        "findings": len(r.findings), "findingKinds": sorted({f.kind for f in r.findings}),
        "tests": len(r.tests), "probes": len(r.probes), "sandbox": r.sandbox or None,
    }


def verify(repo_dir: str | Path, branch: str | None, base: str | None, required: Sequence[str],
           notes_ref: str) -> VerifyReport:
    """Whether `branch` may merge into `base` on its reviewers' signed verdicts (see the module docstring).

    Raises ReviewError for an unknown branch or base, or a base that names no allowed signers.
    """
    from reviewui.core.target import resolve_target

    t = resolve_target(repo_dir, branch, base)
    signers = allowed_signers(t.repo_dir, t.base_ref)
    with tempfile.TemporaryDirectory(prefix="reviewui-verify-") as tmp:
        allowed = Path(tmp) / "allowed_signers"
        allowed.write_text(signers.ssh, encoding="utf-8")
        use = Signers(str(allowed), frozenset(signers.openpgp))
        fingerprint = hashlib.sha256(repr((signers.ssh, sorted(signers.openpgp))).encode()).hexdigest()
        trust = Trust(LocalReviewer("", ""), {}, use, local_counts=False, fingerprint=fingerprint)
        found = branch_verdicts(t.repo_dir, t.branch, t.base, t.head, notes_ref, trust=trust)
    patch = found.patch_id or patch_id(t.repo_dir, t.base, t.head)
    return judge(found, t.branch, t.base, t.head, patch, tuple(required), signers)


def judge(found: BranchVerdicts, branch: str, base: str, head: str, patch: str, required: tuple[str, ...],
          signers: AllowedSigners) -> VerifyReport:
    """The check's answer from the weighed reviews (pure)."""
    principals = {w.review.id: _principal(w, signers) for w in found.reviews if w.signature == "trusted"}
    standing = [w for w in found.standing if w.signature == "trusted"]
    missing: list[str] = []
    approvals: list[WeighedReview] = []
    for w in standing:
        if w.current and w.review.verdict == "reject":
            missing.append(f"rejected by {principals[w.review.id]} ({w.review.at_iso()}), current")
    if required:
        for who in required:
            mine = [w for w in standing if _same(principals[w.review.id], who)]
            ok = [w for w in mine if w.current and w.review.verdict == "approve"]
            if ok:
                approvals.append(ok[-1])
            else:
                missing.append(_missing_line(who, found, mine))
    else:
        ok = [w for w in standing if w.current and w.review.verdict == "approve"]
        if ok:
            approvals.append(ok[-1])
        else:
            missing.append(_missing_line("", found, standing))
    return VerifyReport(not missing, branch, base, head, patch, required, found.reviews, tuple(missing),
                        tuple(approvals), principals)


def _principal(w: WeighedReview, signers: AllowedSigners) -> str:
    if w.check.key.upper() in signers.openpgp:
        return signers.openpgp[w.check.key.upper()]
    return w.check.signer


def _same(principal: str, wanted: str) -> bool:
    a, b = email_of(principal) or principal.strip().lower(), email_of(wanted) or wanted.strip().lower()
    return a == b


def _why_not(w: WeighedReview) -> str:
    if w.signature == "untrusted":
        return "signed by a key not in the allowed signers"
    if w.signature != "trusted":
        return w.why_not or w.check.words()
    if not w.current:
        return "outdated by rework: the patch changed since (whitespace included)"
    return ""


def _missing_line(who: str, found: BranchVerdicts, theirs: list[WeighedReview]) -> str:
    """Why no current signed approve by `who` (anyone: "") is there, in one line."""
    name = who or "any listed signer"
    latest = theirs[-1] if theirs else None
    if latest is not None and latest.review.verdict == "approve":
        return f"no current approve by {name}: their approve of {latest.review.head[:12]} is outdated by rework"
    if latest is not None:
        return f"no current approve by {name}: their latest verdict is a reject"
    claims = [w for w in found.reviews if w.review.verdict == "approve" and w.signature != "trusted"
              and (not who or _same(w.review.reviewer, who))]
    if claims:
        w = claims[-1]
        return f"no current approve by {name} signed by a listed key: the approve claiming {w.review.reviewer} " \
               f"is {_why_not(w)}"  # e.g. `unsigned, pulled from origin`
    return f"no current approve by {name} signed by a listed key"
