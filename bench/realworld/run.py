"""Run `reviewui bite` out of the box on real commits and print how often it agrees with the hand verdicts.

Each case of cases.toml names a public repository, a commit and, per source hunk
(`file` + hunk header), the verdict established by hand: a one-hunk
`git apply -R` and the project's test suite (see hand_revert.py). This script
clones the repository from the local mirror (`fetch` of the search tool puts it
under /work/.mirror/<owner>+<name>/repo), checks the commit out as the reviewer's
working tree, installs that checkout editable (`pip install -e . --no-deps` into a
throw-away venv that also sees the dev environment's packages: the reviewer's
copy is importable from anywhere, through a path entry or setuptools' finder hook;
`--pythonpath` points PYTHONPATH at the checkout instead) and runs

    reviewui bite <commit> --base <commit>^ --format json --fresh

(`--fresh`: evidence stored by an earlier run of the same commit is not reused) with no --test-cmd and no --all-tests. Hunks of files that are not code must come
back `not-code`; every other hunk is compared with the hand verdict. A case with
`pythonpath = true` is run as `--pythonpath` runs every case. A case with
`ulimit_as = BYTES` runs `reviewui bite` under that inherited hard address-space
limit (soft = hard, set before exec, as `ulimit -v` in a login shell or
`prlimit --as` would): reviewui must clamp its own limits to it and say so once
(the note is printed). CI cannot reach the repositories: this is a bench you run
and report, not a test.

    python bench/realworld/run.py [--python PY] [--only PROJECT]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIRRORS = Path(os.environ.get("REVIEWUI_MIRRORS", "/work/.mirror"))


def editable_python(python: str, repo: Path, venv: Path) -> str:
    """A venv with `repo` installed editable, seeing `python`'s packages (pytest, reviewui) too."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    inner = str(venv / "bin" / "python")
    done = subprocess.run([python, "-m", "pip", "--python", inner, "install", "-q", "--no-deps", "-e", str(repo)],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"pip install -e {repo} failed:\n{done.stderr[-2000:]}")
    # After the install (pip must not see the dev packages as the venv's own).
    site = next((venv / "lib").glob("python*/site-packages"))
    paths = subprocess.run([python, "-c", "import sys; print('\\n'.join(p for p in sys.path if p))"],
                           capture_output=True, text=True, check=True).stdout
    (site / "zz_dev_env.pth").write_text(paths, encoding="utf-8")
    return inner


def run_case(case: dict, python: str, tmp: Path, pythonpath: bool = False) -> list[tuple[str, str, str, str]]:
    """(file, header, expected, got) for each hunk of one case."""
    owner, name = case["project"].split("/")
    mirror = MIRRORS / f"{owner}+{name}" / "repo"
    repo = tmp / f"{name}-{case['commit'][:8]}"
    subprocess.run(["git", "clone", "-q", str(mirror), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", case["commit"]], check=True)
    env = dict(os.environ)
    # `pythonpath = true` in a case: its build backend cannot run here (jaraco's fetches a licence text
    # from the network at build time), so the checkout is importable through PYTHONPATH, as a reviewer would.
    if pythonpath or case.get("pythonpath"):  # the reviewer's checkout wins imports through PYTHONPATH
        env["PYTHONPATH"] = os.pathsep.join([str(repo / "src"), str(repo)])
    else:
        python = editable_python(python, repo, tmp / f"venv-{name}-{case['commit'][:8]}")
    env["PATH"] = str(Path(python).parent) + os.pathsep + os.environ.get("PATH", "")
    limit = case.get("ulimit_as")

    def inherited_limit() -> None:  # in the child, before exec: what a shell's `ulimit -v` leaves behind
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.run([python, "-m", "reviewui", "bite", case["commit"], "--base", case["commit"] + "^",
                           "--format", "json", "--fresh"], cwd=repo, env=env, capture_output=True, text=True, timeout=1800,
                          preexec_fn=inherited_limit if limit else None)
    for note in (ln for ln in proc.stderr.splitlines() if "note:" in ln):
        print(f"      {note[:200]}")
    if limit:
        print(f"      (run under an inherited hard address-space limit of {limit} bytes)")
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        return [(h["file"], h["header"], h["verdict"], f"no report (exit {proc.returncode}): "
                 + (proc.stderr.strip().splitlines() or [""])[-1][:120]) for h in case["hunks"]]
    if "hunks" not in doc:  # a refusal alone: {"refused": {"reason", "tests"}}
        why = doc.get("refused", {}).get("reason", "no hunks in the report")
        print(f"      refused: {why[:300]}")
        return [(h["file"], h["header"], h["verdict"], "refused") for h in case["hunks"]]
    got = {(h["file"], h["header"]): h for h in doc["hunks"]}
    rows = []
    for h in case["hunks"]:
        r = got.get((h["file"], h["header"]))
        rows.append((h["file"], h["header"], h["verdict"], r["verdict"] if r else "missing"))
        if r and r["verdict"] != h["verdict"]:
            print(f"      {h['file']} {h['header']}: {r['reason'][:160]}")
    if doc["baseline"]["status"] != "green":
        print(f"      baseline {doc['baseline']['status']}: {doc['baseline']['reason'][:200]}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="the dev environment's Python (has reviewui and pytest)")
    ap.add_argument("--only", help="run only cases of this owner/name")
    ap.add_argument("--pythonpath", action="store_true",
                    help="make the checkout importable through PYTHONPATH instead of an editable install")
    args = ap.parse_args()
    cases = tomllib.loads((HERE / "cases.toml").read_text(encoding="utf-8"))["case"]
    agree = total = origin_toothless = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reviewui-realworld-") as tmp:
        for case in cases:
            if args.only and case["project"] != args.only:
                continue
            print(f"{case['project']} {case['commit'][:10]} ({case.get('shape', '')})")
            for file, header, want, got in run_case(case, args.python, Path(tmp), args.pythonpath):
                # By hand, "no test fails" cannot tell toothless from uncovered; both say no test guards it.
                ok = want == got or (want == "toothless" and got == "uncovered")
                agree += ok
                total += 1
                origin_toothless += (got == "toothless" and want == "bites")
                print(f"  {'ok ' if ok else 'BAD'} {file} {header}: expected {want}, got {got}")
    pct = 100.0 * agree / total if total else 0.0
    print(f"agreement: {agree}/{total} hunks = {pct:.1f}%  (bites called toothless: {origin_toothless}); "
          f"{time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
