"""What a sandboxed run sees of the host: an allowlist, never the host read-only with holes.

The run's root is bubblewrap's empty tmpfs; onto it go only:
- the system's program and library directories (`/usr`, `/bin`, `/sbin`,
  `/lib*`; merged-usr symlinks stay symlinks), read-only;
- a minimal `/etc`: the dynamic loader's cache, name-service and locale
  files, certificates, time zone, `alternatives`, and `passwd`/`group`/`hosts`
  files written by reviewui that name only root, nobody and the run's own uid
  (never the host's users, homes or host names); `resolv.conf` only when the
  trusted config gave the run the network;
- the interpreter's prefix, its venv and the directories on its own
  `sys.path`, read-only (never the reviewer's checkout: an editable install
  there is the scratch's job);
- the paths the reviewer names in the user config (`sandbox-paths`), read-only.

Nothing else of the host exists inside: no `/run` (container-engine and bus
sockets), no `/home` or `/root`, no other checkouts, no `/var`, no `/sys`.
The caller adds `/dev`, `/proc`, the sized private `/tmp` and the run's own
writable directories (`sandbox.wrap`).
"""

from __future__ import annotations

import functools
import glob
import os
import threading
from pathlib import Path

from reviewui.core.config import load_user_prefs
from reviewui.core.run.tempdirs import private_tempdir

SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level host directories a run gets read-only (or as the symlinks they are)."""

ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "host.conf", "gai.conf",
    "ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
    "localtime", "timezone", "alternatives", "mime.types", "protocols", "services",
    "os-release", "debian_version", "locale.alias", "locale.conf", "inputrc", "magic", "mailcap",
)
"""Entries of the host's /etc a run gets read-only: what programs need to start, name a user,
verify a certificate or tell the time. No shadow, no sudoers, no machine-id, no ssh or git config."""

NOBODY = 65534
"""The uid and gid a run has inside when reviewui runs as root (an ordinary user keeps their own)."""

_lock = threading.Lock()


def inside_ids() -> tuple[int, int]:
    """The uid and gid the run has inside its user namespace: never 0."""
    uid, gid = os.geteuid(), os.getegid()
    return (NOBODY, NOBODY) if uid == 0 else (uid, gid if gid != 0 else NOBODY)


@functools.lru_cache(maxsize=1)
def _generated_etc() -> Path:
    """A private directory (this process's) holding the passwd, group and hosts files runs see."""
    with _lock:
        d = private_tempdir("etc")
        uid, gid = inside_ids()
        users = ["root:x:0:0:root:/root:/bin/sh", f"nobody:x:{NOBODY}:{NOBODY}:nobody:/nonexistent:/bin/false"]
        groups = ["root:x:0:", f"nogroup:x:{NOBODY}:"]
        if uid != NOBODY:
            users.append(f"run:x:{uid}:{gid}:run:/nonexistent:/bin/sh")
        if gid != NOBODY:
            groups.append(f"run:x:{gid}:")
        (d / "passwd").write_text("\n".join(users) + "\n", encoding="ascii")
        (d / "group").write_text("\n".join(groups) + "\n", encoding="ascii")
        (d / "hosts").write_text("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
                                 encoding="ascii")
        for f in d.iterdir():
            f.chmod(0o644)
        d.chmod(0o755)
        return d


def _same_or_symlink(path: Path, dest: str) -> list[str]:
    """bwrap arguments that put host `path` at `dest` read-only, a symlink as the same symlink."""
    if path.is_symlink():
        return ["--symlink", os.readlink(path), dest]
    if path.exists():
        return ["--ro-bind", str(path), dest]
    return []


def system_args(network: bool) -> list[str]:
    """bwrap arguments for the system directories and the minimal /etc."""
    out: list[str] = []
    for name in SYSTEM_DIRS:
        out += _same_or_symlink(Path("/") / name, "/" + name)
    out += ["--dir", "/etc"]
    names = list(ETC_FILES) + sorted(os.path.basename(p) for p in glob.glob("/etc/python3*"))
    if network:
        names.append("resolv.conf")
    for name in names:
        out += _same_or_symlink(Path("/etc") / name, "/etc/" + name)
    etc = _generated_etc()
    for name in ("passwd", "group", "hosts"):
        out += ["--ro-bind", str(etc / name), "/etc/" + name]
    return out


def reviewer_paths() -> list[Path]:
    """Extra host paths the reviewer lets runs read (user config `sandbox-paths`), existing ones only."""
    value = load_user_prefs().get("sandbox-paths")
    if not isinstance(value, list):
        return []
    out: list[Path] = []
    for item in value:
        if isinstance(item, str) and item.startswith("/"):
            p = Path(item)
            if p.exists() and p.resolve() != Path("/"):
                out.append(p.resolve())
    return out


def covered(path: Path) -> bool:
    """True when `path` is already inside what `system_args` binds (so it needs no bind of its own)."""
    try:
        real = path.resolve()
    except OSError:
        return False
    text = str(real)
    return any(text == base or text.startswith(base + "/") for base in _system_roots())


@functools.lru_cache(maxsize=1)
def _system_roots() -> tuple[str, ...]:
    """The system directories as resolved (merged-usr: /bin is /usr/bin): they do not move while we run."""
    out: list[str] = []
    for name in SYSTEM_DIRS:
        try:
            out.append(str((Path("/") / name).resolve()))
        except OSError:
            continue
    return tuple(out)
