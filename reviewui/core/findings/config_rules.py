"""`config-changed`: the branch under review edits reviewui's own configuration.

An agent that can set `env-allow`, `network`, severity overrides or the
notes ref would be configuring the review of its own work. Those changes are
ignored unless the reviewer accepts them (`--trust-branch-config`, or in the
UI), and this finding names the keys either way.
"""

from __future__ import annotations

from reviewui.core.config import Settings, branch_config_change
from reviewui.core.findings.model import Finding, finding
from reviewui.core.target import Target


def config_changed(target: Target, settings: Settings) -> list[Finding]:
    """Return one `config-changed` finding when the branch changes reviewui's config, else none."""
    change = branch_config_change(target.repo_dir, target.base, target.head)
    if not change.changed:
        return []
    trusted = settings.branch_config_trusted
    fate = "accepted by the reviewer for this review" if trusted else "ignored (accept with --trust-branch-config)"
    if change.error is not None:
        what = f"the branch's reviewui config cannot be read: {change.error}"
        fate = "ignored"
    else:
        what = f"the branch changes reviewui's config: {', '.join(change.keys)}"
    return [
        finding(
            "config-changed",
            f"{what}; {fate}",
            file=change.files[0] if change.files else None,
            evidence="\n".join(change.keys),
        )
    ]
