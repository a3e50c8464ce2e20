"""Findings as SARIF 2.1.0, for code-scanning annotations on a pull request.

One rule per finding kind (all kinds are listed, so a viewer can explain a
kind even when this run did not raise it); one result per finding. SARIF
has no `info` level: it becomes `note`. A finding about the branch as a
whole (no file) is placed on the branch's first changed file (code scanning
drops results without a physical location), with a logical location naming
the branch; with no changed file at all it has the logical location only.

Code scanning matches a result to the one of an earlier run by its
`partialFingerprints`, so a rerun updates an alert rather than adding one:
each result carries `reviewuiFinding/v1`, a digest of what the finding is
(kind, file, symbol, message with its numbers and commit ids left out: they
move when the head does) and its occurrence among equal ones, never of its
line. `runs[].automationDetails.id` is `reviewui/check/<head>`: the category
`reviewui/check` stays, the run id is the head judged.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from reviewui.core.findings.model import KINDS, Finding

if TYPE_CHECKING:
    from reviewui.core.target import Target

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "reviewui"
INFORMATION_URI = "https://pypi.org/project/reviewui/"
"""Where the tool is described; SARIF requires an absolute URI here."""
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT = "reviewuiFinding/v1"
"""The `partialFingerprints` key of every result."""
CATEGORY = "reviewui/check"
"""`automationDetails.id`'s category: the same for every run, so alerts update rather than duplicate."""
_MOVING = re.compile(r"\b[0-9a-f]{7,64}\b|\d+")


def to_sarif(
    target: "Target", findings: list[Finding], tool_version: str, information_uri: str = INFORMATION_URI,
    changed_files: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """Return a SARIF 2.1.0 log (a dict ready for json.dumps) for `findings` on `target`.

    `changed_files` (in diff order) gives branch-level findings a place to sit.
    """
    kinds = list(KINDS)
    for f in findings:
        if f.kind not in KINDS and f.kind not in kinds:
            kinds.append(f.kind)
    rules = [
        {
            "id": kind,
            "name": _camel(kind),
            "shortDescription": {"text": KINDS[kind].description if kind in KINDS else kind},
            "defaultConfiguration": {"level": LEVELS.get(KINDS[kind].severity if kind in KINDS else "warning", "warning")},
        }
        for kind in kinds
    ]
    index = {kind: i for i, kind in enumerate(kinds)}
    branch = target.branch or "branch"
    anchor = changed_files[0] if changed_files else None
    results = [_result(f, index[f.kind], branch, anchor) for f in findings]
    for result, print_ in zip(results, fingerprints(findings), strict=True):
        result["partialFingerprints"] = {FINGERPRINT: print_}
    run: dict[str, Any] = {
        "automationDetails": {"id": f"{CATEGORY}/{target.head}"},
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": str(tool_version),
                "informationUri": information_uri,
                "rules": rules,
            }
        },
        "results": results,
        "properties": {
            "branch": target.branch,
            "base": target.base,
            "head": target.head,
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def fingerprints(findings: list[Finding]) -> list[str]:
    """Each finding's fingerprint: what it is, never where its line is (see the module docstring).

    Equal findings are told apart by their order in the file (`…:2` for the second)."""
    seen: dict[str, int] = {}
    order = sorted(range(len(findings)), key=lambda i: (findings[i].file or "", findings[i].line or 0, i))
    prints: dict[int, str] = {}
    for i in order:
        f = findings[i]
        what = "\0".join((f.kind, f.file or "", f.symbol or "", _MOVING.sub("#", f.message or "")))
        digest = hashlib.sha256(what.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        seen[digest] = seen.get(digest, 0) + 1
        prints[i] = f"{digest}:{seen[digest]}"
    return [prints[i] for i in range(len(findings))]


def _result(f: Finding, rule_index: int, branch: str = "branch", anchor: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.kind,
        "ruleIndex": rule_index,
        "level": LEVELS.get(f.severity, "warning"),
        "message": {"text": f.message or f.kind},
        "locations": [],
    }
    if f.file:
        physical: dict[str, Any] = {"artifactLocation": {"uri": quote(f.file, safe="/")}}
        if f.line and f.line > 0:
            physical["region"] = {"startLine": int(f.line)}
        result["locations"] = [{"physicalLocation": physical}]
    else:
        where: dict[str, Any] = {"logicalLocations": [{"name": branch, "kind": "module",
                                                       "fullyQualifiedName": f"branch:{branch}"}]}
        if anchor:
            where["physicalLocation"] = {"artifactLocation": {"uri": quote(anchor, safe="/")},
                                         "region": {"startLine": 1}}
        result["locations"] = [where]
    props: dict[str, Any] = {}
    if f.symbol:
        props["symbol"] = f.symbol
    if f.evidence:
        props["evidence"] = f.evidence
    if props:
        result["properties"] = props
    return result


def _camel(kind: str) -> str:
    return "".join(p.capitalize() for p in kind.split("-"))
