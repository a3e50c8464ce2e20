"""Findings as SARIF 2.1.0, for code-scanning annotations on a pull request.

One rule per finding kind (all kinds are listed, so a viewer can explain a
kind even when this run did not raise it); one result per finding. SARIF
has no `info` level: it becomes `note`. A finding about the branch as a
whole (no file) is placed on the branch's first changed file (code scanning
drops results without a physical location), with a logical location naming
the branch; with no changed file at all it has the logical location only.
"""

from __future__ import annotations

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
    run: dict[str, Any] = {
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
