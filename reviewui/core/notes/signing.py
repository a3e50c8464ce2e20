"""Signed verdicts: sign each review with the reviewer's git signing setup, verify with git's trust.

Anyone who can push the notes ref can write a `[[review]]` in anyone's
name, so the `reviewer` field proves nothing. A review is therefore signed,
when the reviewer has git signing configured (`user.signingkey`, with
`gpg.format` `openpgp` (default) or `ssh`), and every review read is
checked against git's own trust settings: `gpg.ssh.allowedSignersFile` for
ssh, the gpg keyring (and `gpg.minTrustLevel`) for openpgp.

The signature covers the exact bytes of the review's TOML as written. It
follows them in the same note chunk as a `[review.signed]` table, so the
signed bytes are everything of the chunk before that table's header line
(and the blank line before it); whatever follows the signature table is
covered by nothing and is read as foreign text (layout.py):

    [[review]]
    id = "..."
    ...
                                   <- a blank line
    [review.signed]
    format = "ssh"
    signature = "-----BEGIN SSH SIGNATURE-----\\n..."

Nothing here decides what to display; see `trust.py`.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from reviewui.core.errors import ReviewError
from reviewui.core.git import config_value
from reviewui.core.notes.layout import split_piece

NAMESPACE = "reviewui"
"""ssh signature namespace: a git commit signature can never pass for a review's."""
SIGNED_HEADER = "[review.signed]"
FORMATS = ("openpgp", "ssh")
_TIMEOUT = 30
_SSH_GOOD = re.compile(r'^Good "[^"]*" signature for (.+) with \S+ key (SHA256:\S+)', re.M)
_TRUST = ("UNDEFINED", "NEVER", "MARGINAL", "FULLY", "ULTIMATE")


@dataclass(frozen=True)
class SigningSetup:
    """The reviewer's git signing configuration."""

    format: str
    """`openpgp` or `ssh` (git's `gpg.format`)."""
    key: str
    """`user.signingkey`: a key id for openpgp; a key file path or `key::` literal for ssh."""
    program: str
    """The signing program (`gpg.program`, `gpg.ssh.program`)."""


@dataclass(frozen=True)
class SignatureCheck:
    """What checking a review's signature found."""

    status: str
    """`good`, `unsigned` or `bad` (includes a key git's trust settings do not know)."""
    signer: str = ""
    """Who signed, for `good`: the allowed-signers principal or the gpg user id."""
    key: str = ""
    """The signing key's fingerprint, when known."""
    detail: str = ""
    """Why it is bad, in words."""
    untrusted: bool = False
    """For `bad`: the signature is whole, but its key is not one the trust settings list (or not known):
    nothing shows it was tampered with, nothing shows whose it is."""

    @property
    def state(self) -> str:
        """`trusted` (good), `untrusted` (whole, by a key not trusted), `bad` (does not verify) or `unsigned`."""
        if self.status == "good":
            return "trusted"
        if self.status == "bad" and self.untrusted:
            return "untrusted"
        return self.status

    def words(self) -> str:
        """One short phrase for display: `signed by X`, `unsigned`, `bad signature (why)`."""
        if self.status == "good":
            return f"signed by {self.signer}"
        if self.status == "unsigned":
            return "unsigned"
        return f"bad signature ({self.detail})" if self.detail else "bad signature"


UNSIGNED = SignatureCheck("unsigned")


@dataclass(frozen=True)
class Signers:
    """Whose signatures a check trusts when not git's own settings: `reviewui verify`'s allowed signers."""

    allowed_file: str
    """An ssh allowed-signers file (git's `gpg.ssh.allowedSignersFile` format), used instead of git's."""
    openpgp: frozenset[str] = frozenset()
    """The OpenPGP key fingerprints listed (upper case): a good gpg signature counts only by one of these."""


_config = config_value  # the one reading of a git config value, shared with the verdict's preflight


def signing_setup(repo_dir: str | Path) -> SigningSetup | None:
    """Return the reviewer's signing setup, or None when `user.signingkey` is not set.

    Raises ReviewError for a `gpg.format` reviewui cannot sign with (x509).
    """
    key = _config(repo_dir, "user.signingkey")
    if not key:
        return None
    fmt = _config(repo_dir, "gpg.format") or "openpgp"
    if fmt not in FORMATS:
        raise ReviewError(f"cannot sign reviews with gpg.format={fmt}: use openpgp or ssh")
    if fmt == "ssh":
        program = _config(repo_dir, "gpg.ssh.program") or "ssh-keygen"
    else:
        program = _config(repo_dir, "gpg.openpgp.program") or _config(repo_dir, "gpg.program") or "gpg"
    return SigningSetup(fmt, key, program)


def sign_payload(setup: SigningSetup, payload: str) -> str:
    """Return the `[review.signed]` table (with its leading blank line) signing `payload`.

    Raises ReviewError when the signing program fails (no agent, wrong key, ...).
    """
    data = payload.encode("utf-8")
    if setup.format == "ssh":
        with _ssh_key_file(setup.key) as keyfile:
            sig = _run([setup.program, "-Y", "sign", "-f", keyfile, "-n", NAMESPACE], data, "ssh-keygen -Y sign")
    else:
        sig = _run([setup.program, "--status-fd=2", "-bsau", setup.key], data, "gpg --sign")
    table = tomli_w.dumps({"format": setup.format, "signature": sig.decode("ascii", "replace")})
    return f"\n{SIGNED_HEADER}\n{table}"


def split_signed(chunk: str) -> tuple[str, str | None, str | None]:
    """Split a review chunk into (signed payload, format, signature); format is None when unsigned.

    The signature table is found by tomllib however it is spelled (layout.py);
    a malformed one gives format "" and signature "".
    """
    parts = split_piece(chunk)
    return parts.payload, parts.format, parts.signature


def verify_chunk(repo_dir: str | Path, chunk: str, signers: Signers | None = None) -> SignatureCheck:
    """Check the signature of one review chunk against git's trust settings (or `signers`, when given)."""
    payload, fmt, sig = split_signed(chunk)
    if fmt is None:
        return UNSIGNED
    if not sig or fmt not in FORMATS:
        return SignatureCheck("bad", detail="malformed signature")
    try:
        if fmt == "ssh":
            return _verify_ssh(repo_dir, payload.encode("utf-8"), sig, signers)
        return _verify_gpg(repo_dir, payload.encode("utf-8"), sig, signers)
    except ReviewError as e:
        return SignatureCheck("bad", detail=str(e))


def _verify_ssh(repo_dir: str | Path, data: bytes, sig: str, signers: Signers | None = None) -> SignatureCheck:
    program = _config(repo_dir, "gpg.ssh.program") or "ssh-keygen"
    where = "the allowed signers" if signers is not None else "gpg.ssh.allowedSignersFile"
    allowed = signers.allowed_file if signers is not None else _config(repo_dir, "gpg.ssh.allowedSignersFile")
    if not allowed:
        return SignatureCheck("bad", detail="no gpg.ssh.allowedSignersFile to check it against", untrusted=True)
    allowed = str(Path(allowed).expanduser())
    with tempfile.TemporaryDirectory(prefix="reviewui-sig-") as tmp:
        sig_file = Path(tmp) / "review.sig"
        sig_file.write_text(sig, encoding="ascii", errors="replace")
        found = _probe([program, "-Y", "find-principals", "-s", str(sig_file), "-f", allowed], b"")
        principals = found.stdout.decode("utf-8", "replace").split() if found.returncode == 0 else []
        if not principals:
            checked = _probe([program, "-Y", "check-novalidate", "-n", NAMESPACE, "-s", str(sig_file)], data)
            if checked.returncode == 0:
                return SignatureCheck("bad", detail=f"key not in {where}", untrusted=True)
            return SignatureCheck("bad", detail="does not verify")
        for principal in principals:
            proc = _probe([program, "-Y", "verify", "-f", allowed, "-I", principal, "-n", NAMESPACE,
                           "-s", str(sig_file)], data)
            m = _SSH_GOOD.search(proc.stdout.decode("utf-8", "replace"))
            if proc.returncode == 0 and m:
                return SignatureCheck("good", signer=m.group(1), key=m.group(2))
    return SignatureCheck("bad", detail="does not verify")


def _verify_gpg(repo_dir: str | Path, data: bytes, sig: str, signers: Signers | None = None) -> SignatureCheck:
    program = _config(repo_dir, "gpg.openpgp.program") or _config(repo_dir, "gpg.program") or "gpg"
    minimum = (_config(repo_dir, "gpg.minTrustLevel") or "undefined").upper()
    with tempfile.TemporaryDirectory(prefix="reviewui-sig-") as tmp:
        sig_file = Path(tmp) / "review.asc"
        sig_file.write_text(sig, encoding="ascii", errors="replace")
        proc = _probe([program, "--status-fd=1", "--verify", str(sig_file), "-"], data)
    status = proc.stdout.decode("utf-8", "replace")
    good = re.search(r"^\[GNUPG:\] GOODSIG (\S+) (.*)$", status, re.M)
    valid = re.search(r"^\[GNUPG:\] VALIDSIG (\S+)", status, re.M)
    trust = re.search(r"^\[GNUPG:\] TRUST_(\w+)", status, re.M)
    if not (good and valid):
        if "NO_PUBKEY" in status:
            return SignatureCheck("bad", detail="no public key for it", untrusted=True)
        return SignatureCheck("bad", detail="does not verify")
    if signers is not None:
        # The list is the trust: the keyring's web of trust has no say, only whether the key is listed.
        line = re.search(r"^\[GNUPG:\] VALIDSIG (.*)$", status, re.M)
        fields = line.group(1).split() if line else []
        # the signing (sub)key's fingerprint first, the primary key's last: either may be listed
        prints = {f.upper() for f in (fields[:1] + fields[9:10]) if len(f) >= 16}
        if not prints & signers.openpgp:
            return SignatureCheck("bad", detail="key not in the allowed signers", untrusted=True)
        return SignatureCheck("good", signer=good.group(2).strip(), key=valid.group(1))
    level = trust.group(1) if trust else "UNDEFINED"
    if level == "NEVER" or (level in _TRUST and minimum in _TRUST and _TRUST.index(level) < _TRUST.index(minimum)):
        return SignatureCheck("bad", detail=f"key trust {level.lower()} is below gpg.minTrustLevel", untrusted=True)
    return SignatureCheck("good", signer=good.group(2).strip(), key=valid.group(1))


def local_key_fingerprint(setup: SigningSetup) -> str:
    """The fingerprint of the reviewer's own signing key (`SHA256:...` for ssh, the key id for gpg)."""
    if setup.format != "ssh":
        return setup.key.upper().removeprefix("0X")
    with _ssh_key_file(setup.key) as keyfile:
        out = _probe([setup.program, "-l", "-f", keyfile], b"")
    parts = out.stdout.decode("utf-8", "replace").split()
    return parts[1] if out.returncode == 0 and len(parts) > 1 else ""


class _ssh_key_file:
    """A path to the ssh key: the configured file, or a temp file for a `key::` literal."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.tmp: str | None = None

    def __enter__(self) -> str:
        if self.key.startswith("key::"):
            fd, self.tmp = tempfile.mkstemp(prefix="reviewui-key-", suffix=".pub")
            os.write(fd, self.key.removeprefix("key::").encode() + b"\n")
            os.close(fd)
            return self.tmp
        if self.key.startswith(("ssh-", "ecdsa-", "sk-")):  # a literal public key without the prefix
            self.key = "key::" + self.key
            return self.__enter__()
        return str(Path(self.key).expanduser())

    def __exit__(self, *exc: object) -> None:
        if self.tmp:
            os.unlink(self.tmp)


def _probe(cmd: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(cmd, input=data, capture_output=True, timeout=_TIMEOUT)
    except FileNotFoundError as e:
        raise ReviewError(f"{cmd[0]} is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise ReviewError(f"{cmd[0]} took longer than {_TIMEOUT}s") from e


def _run(cmd: list[str], data: bytes, what: str) -> bytes:
    proc = _probe(cmd, data)
    if proc.returncode != 0 or not proc.stdout.strip():
        first = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["failed"])[0]
        raise ReviewError(f"could not sign the review: {what}: {first}")
    return proc.stdout
