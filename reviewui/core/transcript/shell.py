"""The files a shell command writes, read with a real shell parser (bashlex) and Python's `ast`.

Redirects of any command (`pwd > out.txt`, `echo "a; b" > x.sql`), here
documents (`cat > f <<'EOF'`), `tee`, `mv`, `cp`, `rm`, `sed -i`/`perl -i`,
patches fed to `git apply`, `patch` or `apply_patch`, and Python run inline
(`python -c "…open(p, 'w')…"`, `python - <<EOF`) whose code opens a file for
writing or calls `write_text`. `cd dir && …` in the same command makes later
relative paths relative to `dir`. A command bashlex cannot parse yields no
edits rather than a guess.
"""

from __future__ import annotations

import ast
import functools
import posixpath
import re
from typing import Any

from reviewui.core.transcript.model import EditOp, FileEdit
from reviewui.core.transcript.patches import parse_apply_patch, parse_unified_diff

_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
_MARK = "__reviewui_heredoc_{}__"
_HINTS = (">", "tee", "mv ", "cp ", "rm ", "sed", "perl", "apply", "patch", "write", "open(", "install ")
_PYTHONS = re.compile(r"^(?:.*/)?(?:python|python3(?:\.\d+)?|py)$")
_WRITE_MODES = re.compile(r"[wax+]")
_AGENTSKILLS: dict[str, EditOp] = {
    "edit_file_by_replace": "replace", "insert_content_at_line": "insert", "append_file": "insert",
    "create_file": "create", "edit_file": "replace",
}


def might_write(cmd: str) -> bool:
    """Cheap test: False when the command cannot write a file (most commands), so it is not parsed."""
    if any(h in cmd for h in _HINTS):
        return True
    # Inline Python writes only from `-c` code or a here document (`python -m pytest` does not).
    return "python" in cmd and ("-c" in cmd or "<<" in cmd)


def shell_edits(cmd: str, call_id: str | None = None) -> list[FileEdit] | None:
    """Return the file edits the command makes; None when bashlex cannot parse it."""
    if not cmd or not might_write(cmd):
        return []
    found = _parsed_edits(cmd)
    if found is None:
        return None
    return [FileEdit(p, op, old, new, patch, existed, call_id) for p, op, old, new, patch, existed in found]


# A FileEdit's fields but its call id: what the cached parse of a command keeps.
_EditFields = tuple[str, EditOp, str | None, str | None, str | None, bool | None]


@functools.lru_cache(maxsize=512)
def _parsed_edits(cmd: str) -> tuple[_EditFields, ...] | None:
    # Agents run the same command many times (a test run, a rewrite script): parse each once.
    import bashlex  # imported on first use: building its parser costs a moment

    text, bodies = _cut_heredocs(cmd)
    try:
        trees = bashlex.parse(text)
    except Exception:  # bashlex raises its own and plain errors on what it does not support
        return None
    walker = _Walker(bodies, None)
    for tree in trees:
        walker.visit(tree)
    return tuple((e.path, e.operation, e.old, e.new, e.patch, e.existed) for e in walker.edits)


_INTERPRETERS = re.compile(r"^(?:python[0-9.]*|py|bash|sh|zsh|node|ruby|perl|deno|tsx|ts-node|php|Rscript)$")


def _walk(node: Any) -> Any:
    """Every node of a bashlex tree, depth first (bashlex's own visitor skips some node kinds)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        children: list[Any] = []
        for attr in ("parts", "list"):
            v = getattr(n, attr, None)
            if isinstance(v, list):
                children.extend(v)
        for attr in ("command", "output"):
            v = getattr(n, attr, None)
            if v is not None and hasattr(v, "kind"):
                children.append(v)
        stack.extend(reversed(children))


def scripts_run(cmd: str) -> list[str]:
    """The script files a shell command runs (`python fix.py`, `bash gen.sh`, `./tool.py`), in order."""
    if not cmd or not any(h in cmd for h in ("python", "py ", "sh ", "node", "ruby", "perl", "./", "patch", "apply")):
        return []
    return list(_scripts_run(cmd))


@functools.lru_cache(maxsize=512)
def _scripts_run(cmd: str) -> tuple[str, ...]:
    import bashlex

    text, _ = _cut_heredocs(cmd)
    try:
        trees = bashlex.parse(text)
    except Exception:  # bashlex raises its own and plain errors on what it does not support
        return ()
    found: list[str] = []
    for tree in trees:
        for n in _walk(tree):
            if n.kind != "command":
                continue
            parts = n.parts
            words = [p.word for p in parts if p.kind == "word"]
            if not words:
                continue
            name = words[0].rsplit("/", 1)[-1]
            stdin = [
                p.output.word for p in parts
                if p.kind == "redirect" and p.type == "<" and getattr(getattr(p, "output", None), "kind", "") == "word"
            ]
            if name == "patch" or (name == "git" and words[1:2] == ["apply"]):
                # A patch file the run wrote, applied: the patch is the "script".
                files = [w for w in words[2 if name == "git" else 1 :] if not w.startswith("-")]
                found.extend(f for f in stdin + files if not f.startswith("__reviewui_heredoc_"))
            elif _INTERPRETERS.match(name):
                args = words[1:]
                if "-c" in args or "-m" in args or "-e" in args:
                    continue
                script = next((a for a in args if not a.startswith("-")), None)
                if script:
                    found.append(script)
            elif words[0].startswith("./") or words[0].endswith((".py", ".sh")):
                found.append(words[0])
    return tuple(found)


def _cut_heredocs(cmd: str) -> tuple[str, list[str]]:
    """Replace each here document by an input redirect from a marker file; return the bodies in order."""
    lines = cmd.split("\n")
    out: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        found = list(_HEREDOC.finditer(line))
        if not found:
            out.append(line)
            i += 1
            continue
        for m in reversed(found):
            line = line[: m.start()] + "< " + _MARK.format(len(bodies) + found.index(m)) + line[m.end() :]
        out.append(line)
        i += 1
        for m in found:
            strip_tabs, delim = m.group(1) == "-", m.group(3)
            body: list[str] = []
            while i < len(lines) and (lines[i].lstrip("\t") if strip_tabs else lines[i]).strip() != delim:
                body.append(lines[i].lstrip("\t") if strip_tabs else lines[i])
                i += 1
            i += 1  # the delimiter line
            bodies.append("\n".join(body))
    return "\n".join(out), bodies


class _Walker:
    """Collects the edits of every command in a bashlex tree."""

    def __init__(self, bodies: list[str], call_id: str | None) -> None:
        self.bodies = bodies
        self.call_id = call_id
        self.edits: list[FileEdit] = []
        self.cwd = ""

    def visit(self, node: Any) -> None:
        """Visit `node` and everything under it (commands in substitutions and loops included)."""
        for n in _walk(node):
            if n.kind == "command":
                self.visitcommand(n, n.parts)

    def visitcommand(self, node: Any, parts: list[Any]) -> bool:
        words: list[str] = []
        stdin: str | None = None
        outs: list[tuple[str, str]] = []
        for p in parts:
            if p.kind == "word":
                words.append(p.word)
            elif p.kind == "redirect":
                target = getattr(p, "output", None)
                word = target.word if target is not None and getattr(target, "kind", "") == "word" else None
                if p.type == "<" and word and word.startswith("__reviewui_heredoc_"):
                    stdin = self.bodies[int(word[len("__reviewui_heredoc_") : -2])]
                elif p.type in (">", ">>", ">|", "&>", "&>>") and word and not word.startswith(("/dev/", "&")):
                    outs.append((p.type, word))
        self._command(words, stdin, outs)
        return True  # visit substitutions inside (`$(… > f)`)

    def _path(self, p: str) -> str:
        if self.cwd and not p.startswith(("/", "~", "$")):
            return posixpath.normpath(posixpath.join(self.cwd, p))
        return p

    def _add(self, path: str, op: EditOp, new: str | None = None, existed: bool | None = None) -> None:
        self.edits.append(FileEdit(self._path(path), op, None, new, None, existed, self.call_id))

    def _command(self, words: list[str], stdin: str | None, outs: list[tuple[str, str]]) -> None:
        for kind, target in outs:
            content = stdin if stdin is not None and words[:1] == ["cat"] else None
            if content is None and words[:1] in (["echo"], ["printf"]) and kind in (">", ">|", "&>"):
                content = " ".join(w for w in words[1:] if not w.startswith("-")) if words[:1] == ["echo"] else None
            self._add(target, "insert" if kind.endswith(">>") else "write", content)
        if not words:
            return
        name, args = words[0].rsplit("/", 1)[-1], words[1:]
        if name == "sudo" and args:
            name, args = args[0].rsplit("/", 1)[-1], args[1:]
        if name == "cd" and args:
            self.cwd = args[0] if args[0].startswith("/") else posixpath.join(self.cwd, args[0])
        elif name == "tee":
            append = any(a in ("-a", "--append") for a in args)
            for f in (a for a in args if not a.startswith("-") and not a.startswith("/dev/")):
                self._add(f, "insert" if append else "write", stdin)
        elif name == "rm":
            for f in (a for a in args if not a.startswith("-")):
                self._add(f, "delete", existed=True)
        elif name in ("mv", "cp", "install") and len([a for a in args if not a.startswith("-")]) >= 2:
            files = [a for a in args if not a.startswith("-")]
            if name == "mv":
                for src in files[:-1]:
                    self._add(src, "delete", existed=True)
            dest = files[-1]
            if len(files) > 2 or dest.endswith("/"):
                for src in files[:-1]:
                    self._add(posixpath.join(dest, posixpath.basename(src)), "shell")
            else:
                self._add(dest, "shell")
        elif name in ("sed", "perl") and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
            for f in sed_files(args):
                self._add(f, "shell", existed=True)
        elif name in ("apply_patch", "applypatch") and stdin is not None:  # Codex takes both spellings
            self.edits.extend(self._rebase(parse_apply_patch(stdin, self.call_id)))
        elif (name == "git" and args[:1] == ["apply"] or name == "patch") and stdin is not None:
            self.edits.extend(self._rebase(parse_unified_diff(stdin, self.call_id)))
        elif _PYTHONS.match(name):
            code = args[args.index("-c") + 1] if "-c" in args[:-1] else stdin if args[:1] in ([], ["-"]) else None
            if code:
                self.edits.extend(self._rebase(python_edits(code, self.call_id)))

    def _rebase(self, edits: list[FileEdit]) -> list[FileEdit]:
        if not self.cwd:
            return edits
        return [FileEdit(self._path(e.path), e.operation, e.old, e.new, e.patch, e.existed, e.call_id) for e in edits]


def sed_files(args: list[str]) -> list[str]:
    """The files a `sed` command edits, from its arguments (the script and its options skipped)."""
    files: list[str] = []
    script_seen = skip = False
    for tok in args:
        if skip:
            skip = False
            continue
        if tok in ("-e", "--expression", "-f", "--file"):
            script_seen = skip = True
            continue
        if tok.startswith("-"):
            continue
        if not script_seen:
            script_seen = True
            continue
        files.append(tok)
    return files


def python_edits(code: str, call_id: str | None = None) -> list[FileEdit]:
    """Return the files Python `code` evidently writes: `open(p, 'w'|'a'|'x')`, `Path(p).write_text(…)`,
    `shutil.copy(…, p)`, and OpenHands' agentskills editing calls. Paths must be string literals."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    # `p = 'src/a.py'; open(p, 'w')`: names bound once to a string literal count as that literal.
    names: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            key = node.targets[0].id
            value = node.value.value if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) else None
            names[key] = value if key not in names else None
    edits: list[FileEdit] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if fname == "open" and node.args:
            path = _literal(node.args[0], names)
            mode = _literal(node.args[1], names) if len(node.args) > 1 else _keyword(node, "mode", names)
            if path and mode and _WRITE_MODES.search(mode):
                edits.append(FileEdit(path, "insert" if "a" in mode else "write", None, None, None, None, call_id))
        elif fname in ("write_text", "write_bytes") and isinstance(f, ast.Attribute):
            path = _path_object(f.value, names)
            if path:
                content = _literal(node.args[0], names) if node.args else None
                edits.append(FileEdit(path, "write", None, content, None, None, call_id))
        elif fname in ("copy", "copyfile", "copy2", "move") and len(node.args) >= 2:
            path = _literal(node.args[1], names)
            if path:
                edits.append(FileEdit(path, "shell", None, None, None, None, call_id))
        elif fname in _AGENTSKILLS and node.args:
            path = _literal(node.args[0], names)
            if path:
                op = _AGENTSKILLS[fname]
                new = _keyword(node, "new_content", names) or _keyword(node, "content", names)
                old = _keyword(node, "to_replace", names)
                edits.append(FileEdit(path, op, old, new, None, op != "create", call_id))
    return edits


def _literal(node: ast.AST, names: dict[str, str | None]) -> str | None:
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(call: ast.Call, name: str, names: dict[str, str | None]) -> str | None:
    for k in call.keywords:
        if k.arg == name:
            return _literal(k.value, names)
    return None


def _path_object(node: ast.AST, names: dict[str, str | None]) -> str | None:
    """`Path('x')` / `pathlib.Path("x")` → 'x'."""
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in ("Path", "PosixPath", "PurePath"):
            return _literal(node.args[0], names)
    return None
