"""The project's own test layout, as its base commit configures it: which files are tests, how they run.

One source for both questions reviewui asks: which changed files are tests
(classification, roles.py) and which tests a run selects (bite/selection.py).
It is read through git from the *base* commit only (the branch is the
agent's): pytest's `python_files`, `testpaths` and the `-p` plugins of
`addopts`, from the first of pytest.ini, .pytest.ini, pyproject.toml,
tox.ini and setup.cfg holding a pytest section (the file pytest takes its
rootdir and inifile from), and whether a test module builds its tests with
unittest's `load_tests` protocol, which pytest does not run.

Beyond pytest's own names, a root `test.py`, `tests.py` and `*_tests.py`
count as test modules: projects use them, and pytest collects any file it
is handed by path, so a run names them when pytest would not find them. So
do the files an explicit test command names (`pytest tests/tests_io.py`):
pytest collects a file it is handed whatever its name.

`TestLayout.is_module` is the one rule for "is this file a test module":
bite's selection, the truth table's and the fixtures pane's test analysis,
coverage attribution and the findings all ask it (a test checks that each
does); `is_test_class` / `is_test_function` are pytest's `python_classes`
and `python_functions` for the tests inside one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from reviewui.core.git import list_files, run_git, show_file

PYTEST_CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""Where pytest looks for its configuration, in its own order."""
PYTEST_DEFAULT_FILES = ("test_*.py", "*_test.py")
"""pytest's default `python_files`."""
PYTEST_DEFAULT_CLASSES = ("Test",)
"""pytest's default `python_classes` (prefixes or globs)."""
PYTEST_DEFAULT_FUNCTIONS = ("test",)
"""pytest's default `python_functions` (prefixes or globs)."""
EXTRA_TEST_FILES = ("test.py", "tests.py", "*_tests.py")
"""Test modules projects name so though pytest does not collect them by name."""
UNITTEST_PATTERN = "test*.py"
"""`python -m unittest`'s default discovery pattern."""
UNITTEST_COMMAND = "python -m unittest"
"""The command a unittest-only suite runs with when no test command is configured."""
MAX_CONFIG_BYTES = 1024 * 1024
"""A pytest config blob larger than this is not read (the defaults apply)."""


@dataclass(frozen=True)
class TestLayout:
    """How the base commit lays out and configures its tests."""

    __test__ = False  # not a pytest test class, whatever its name

    python_files: tuple[str, ...] = PYTEST_DEFAULT_FILES
    """pytest's `python_files` (its default when not configured)."""
    testpaths: tuple[str, ...] = ()
    """pytest's `testpaths` (folders or files), empty when not configured."""
    config_file: str = ""
    """The file pytest takes its configuration from, "" when the project has none."""
    plugins: tuple[str, ...] = ()
    """Plugins `addopts` loads or blocks with `-p` (`no:randomly` included)."""
    load_tests: tuple[str, ...] = ()
    """Test modules that define unittest's `load_tests` (pytest does not call it)."""
    unittest_modules: tuple[str, ...] = ()
    """Files only `python -m unittest`'s discovery finds (test*.py, not a pytest test module)."""
    blocked_cases: tuple[str, ...] = ()
    """Test modules with unittest TestCases that `-p no:unittest` in addopts keeps pytest from running."""
    python_classes: tuple[str, ...] = PYTEST_DEFAULT_CLASSES
    """pytest's `python_classes`: prefixes (or globs) of the classes whose tests it collects."""
    python_functions: tuple[str, ...] = PYTEST_DEFAULT_FUNCTIONS
    """pytest's `python_functions`: prefixes (or globs) of the functions it collects as tests."""
    xdist: bool = False
    """`addopts` start pytest-xdist workers (`-n`, `--numprocesses`, `--dist`): every run turns them off."""
    discovery: str = ""
    """Where `python -m unittest discover` must start to find the suite ("" : the root, as a bare
    `python -m unittest` does), e.g. `src` when the tests live inside a package of a src layout."""
    named: tuple[str, ...] = ()
    """File-name globs the reviewer's trusted `test-globs` setting adds (those without a folder,
    `check_*.py`): a run names such a module, so pytest collects it."""
    command_files: tuple[str, ...] = ()
    """Test modules the explicit test command names (`pytest tests/tests_io.py`): pytest collects a
    file it is handed by path whatever its name, so these are test modules too."""

    @property
    def module_globs(self) -> tuple[str, ...]:
        """File-name globs of test modules: pytest's `python_files` and the extra names."""
        return tuple(dict.fromkeys([*self.python_files, *EXTRA_TEST_FILES]))

    def role_globs(self) -> tuple[str, ...]:
        """Globs (roles.py syntax) that make a file a test, on top of the trusted `test-globs`.

        A configured `python_files` counts inside `testpaths` only when
        those are set: `python_files = *.py` with `testpaths = tests` does
        not make the package's own modules tests.
        """
        names = [g for g in self.module_globs if g not in PYTEST_DEFAULT_FILES and g not in EXTRA_TEST_FILES]
        folders = self._folders()
        scoped = [f"{d}/**/{g}" for d in folders for g in names] if folders else names
        return tuple(dict.fromkeys([*EXTRA_TEST_FILES, *scoped, *self.unittest_modules, *self.command_files]))

    def _folders(self) -> list[str]:
        return [p.strip("/") for p in self.testpaths if p.strip("/") not in ("", ".")]

    def is_module(self, path: str) -> bool:
        """True when `path` is a test module (collected tests, not a helper or conftest).

        The one rule every part of reviewui asks (see the module docstring): a file the
        test command names, a module only unittest's discovery finds, or a file whose
        name pytest's `python_files`, a name projects use (`test.py`) or the reviewer's
        `test-globs` (`named`) match; a
        configured `python_files` counts inside `testpaths` only when those are set,
        as `role_globs` says.
        """
        if path in self.command_files or path in self.unittest_modules:
            return True
        name = PurePosixPath(path).name
        if name == "conftest.py":
            return False
        if any(fnmatchcase(name, g) for g in (*EXTRA_TEST_FILES, *self.named)):
            return True
        matched = [g for g in self.python_files if fnmatchcase(name, g)]
        if not matched or any(g in PYTEST_DEFAULT_FILES for g in matched):
            return bool(matched)
        folders = self._folders()
        return not folders or any(path.startswith(d + "/") for d in folders)

    def is_test_class(self, name: str) -> bool:
        """True when pytest's `python_classes` collect a class called `name` (unittest cases aside)."""
        return _prefix_or_glob(name, self.python_classes)

    def is_test_function(self, name: str) -> bool:
        """True when pytest's `python_functions` collect a function or method called `name`."""
        return _prefix_or_glob(name, self.python_functions)

    def with_globs(self, test_globs: Iterable[str]) -> TestLayout:
        """This layout with the folder-less file globs of the trusted `test-globs` (`named`)."""
        names = [g for g in test_globs if "/" not in g and g != "conftest.py" and g.endswith(".py")]
        return replace(self, named=tuple(dict.fromkeys(names)))

    def with_command(self, command: str) -> TestLayout:
        """This layout with the test modules `command` names by path (`command_files`)."""
        return replace(self, command_files=command_files(command))

    def pytest_finds(self, path: str) -> bool:
        """True when a bare `pytest` run collects `path` by itself (name and testpaths)."""
        name = PurePosixPath(path).name
        if not any(fnmatchcase(name, g) for g in self.python_files):
            return False
        folders = self._folders()
        return not folders or any(path == d or path.startswith(d + "/") for d in folders)

    def suite_paths(self, tree: Iterable[str]) -> tuple[str, ...]:
        """Test modules to name in a whole-suite pytest run, or () when a bare run finds them all.

        With `testpaths` configured, modules outside them are not the project's suite (sample
        projects, vendored trees): only modules inside them that pytest's names miss are added.
        """
        folders = self._folders()

        def in_suite(path: str) -> bool:
            return not folders or any(path == d or path.startswith(d + "/") for d in folders)

        modules = [p for p in tree if p.endswith(".py") and self.is_module(p)
                   and (in_suite(p) or p in self.unittest_modules)]
        if all(self.pytest_finds(p) for p in modules):
            return ()
        return tuple(modules)

    @property
    def unittest_command(self) -> str:
        """The command a unittest suite runs with: a bare `python -m unittest` from the root, or
        discovery from where the suite can be imported (`discovery`)."""
        if not self.discovery:
            return UNITTEST_COMMAND
        return f"{UNITTEST_COMMAND} discover -s {self.discovery} -t {self.discovery}"

    @property
    def wants_unittest(self) -> bool:
        """True when the suite must run under `python -m unittest` rather than pytest.

        When a test module builds its tests through `load_tests`, or when
        the project has no pytest configuration and only unittest's
        discovery finds its test files, or when `-p no:unittest` keeps pytest from
        running its TestCases.
        """
        return bool(self.load_tests or self.blocked_cases) or (not self.config_file and bool(self.unittest_modules))


def read_layout(repo_dir: str | Path, rev: str) -> TestLayout:
    """The test layout stored at commit `rev` (read through git, never a working tree)."""
    everything = list_files(repo_dir, rev)
    present = set(everything)
    options: dict[str, list[str]] = {}
    config_file = ""
    for name in PYTEST_CONFIG_FILES:
        # Only the files the tree has: each read is a git process, paid before the first screen.
        blob = show_file(repo_dir, rev, name) if name in present else None
        if blob is None or len(blob) > MAX_CONFIG_BYTES or not _may_configure_pytest(name, blob):
            continue
        found = pytest_options(name, blob.decode("utf-8", "replace"))
        if found is not None:
            options, config_file = found, name
            break
    layout = TestLayout(
        python_files=tuple(options.get("python_files") or PYTEST_DEFAULT_FILES),
        testpaths=tuple(options.get("testpaths") or ()),
        config_file=config_file,
        plugins=_plugins(options.get("addopts") or []),
        python_classes=tuple(options.get("python_classes") or PYTEST_DEFAULT_CLASSES),
        python_functions=tuple(options.get("python_functions") or PYTEST_DEFAULT_FUNCTIONS),
        xdist=uses_xdist(options.get("addopts") or []),
    )
    tree = [p for p in everything if p.endswith(".py")]
    # unittest's pattern also matches `testing.py` helpers: only files with a TestCase in them count.
    # (a git path has no empty or dot parts: its name is what follows the last slash; pathlib was ~8 µs a path)
    candidates = [p for p in tree if fnmatchcase(p.rpartition("/")[2], UNITTEST_PATTERN)
                  and not layout.is_module(p) and _importable(p)]
    # Only the test modules' blobs are read: a grep of the whole tree costs startup time on a large repo.
    where = [f":(glob)**/{g}" for g in dict.fromkeys([*layout.module_globs, UNITTEST_PATTERN])]
    unittest_only = tuple(sorted(set(candidates) & set(
        _grep(repo_dir, rev, r"TestCase\b", [f":(glob)**/{UNITTEST_PATTERN}"])))) if candidates else ()
    loaders = tuple(p for p in _grep(repo_dir, rev, r"^def load_tests\(", where)
                    if layout.is_module(p) or p in unittest_only)
    blocked: tuple[str, ...] = ()
    if "no:unittest" in layout.plugins:
        blocked = tuple(p for p in _grep(repo_dir, rev, r"TestCase\b", where) if layout.is_module(p))
    read = replace(layout, load_tests=loaders, unittest_modules=unittest_only, blocked_cases=blocked)
    if not read.wants_unittest:
        return read
    return replace(read, discovery=discovery_start([p for p in tree if read.is_module(p)], present))


def _may_configure_pytest(name: str, blob: bytes) -> bool:
    """False when a pyproject.toml cannot hold a pytest table (no need to parse it: most starts never
    parse TOML). A quoted key may spell the name with escapes, so any escape sends it to the parser."""
    return name != "pyproject.toml" or b"pytest" in blob or b"\\u" in blob or b"\\U" in blob


def _grep(repo_dir: str | Path, rev: str, pattern: str, paths: list[str]) -> list[str]:
    """Files among `paths` (pathspecs) at `rev` with a line matching the extended regex `pattern`."""
    if not paths:
        return []
    out = run_git(repo_dir, "grep", "-l", "-z", "-E", "-e", pattern, rev, "--", *paths, check=False)
    return [p.decode("utf-8", "replace").partition(":")[2] for p in out.split(b"\0") if p]


def _importable(path: str) -> bool:
    """True for a file unittest's discovery reaches from the root: at the root, or not in a hidden folder."""
    return not any(part.startswith(".") for part in PurePosixPath(path).parts[:-1])


def pytest_options(name: str, text: str) -> dict[str, list[str]] | None:
    """pytest's settings in config file `name` (each value a list of words), None when it has no pytest section."""
    raw: dict[str, Any]
    if name == "pyproject.toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        tool = data.get("tool")
        section = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(section, dict):
            return None
        inner = section.get("ini_options")
        raw = dict(inner) if isinstance(inner, dict) else {k: v for k, v in section.items() if k != "ini_options"}
    else:
        import configparser  # here, not at the top: most projects' reviews never need it

        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return None
        wanted = "tool:pytest" if name == "setup.cfg" else "pytest"
        if not parser.has_section(wanted):
            return None if name not in ("pytest.ini", ".pytest.ini") else {}
        raw = dict(parser.items(wanted))
    return {k: _words(v) for k, v in raw.items()}


def _words(value: Any) -> list[str]:
    import shlex

    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value), comments=True)
    except ValueError:
        return str(value).split()


def _plugins(addopts: list[str]) -> tuple[str, ...]:
    """The names given to `-p` in addopts (`-p x`, `-px`)."""
    out: list[str] = []
    for i, word in enumerate(addopts):
        if word == "-p" and i + 1 < len(addopts):
            out.append(addopts[i + 1])
        elif word.startswith("-p") and len(word) > 2 and not word.startswith("--"):
            out.append(word[2:])
    return tuple(out)


def _prefix_or_glob(name: str, options: tuple[str, ...]) -> bool:
    """pytest's own test for `python_classes` / `python_functions`: a prefix, or a glob when it has one."""
    return any(name.startswith(o) or (any(c in o for c in "*?[") and fnmatchcase(name, o)) for o in options)


_VALUE_OPTIONS = frozenset("-c -p -k -m -o --rootdir --confcutdir --ignore --ignore-glob --deselect --override-ini "
                           "--basetemp --junitxml --junit-xml --cov --cov-config -s -t --start-directory "
                           "--top-level-directory --pattern".split())
"""Options of pytest and `unittest discover` whose next word is their value, never a test file."""


def command_files(command: str) -> tuple[str, ...]:
    """The `.py` files a test command names by path (`pytest tests/tests_io.py::T`, `python -m
    unittest tests/tests_io.py`): never the interpreter, a script it runs, or an option's value."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return ()
    while words and "=" in words[0] and not words[0].startswith(("-", "/", ".")):
        words = words[1:]  # `VAR=value` words before the command
    if not words:
        return ()
    rest = words[1:]
    if PurePosixPath(words[0]).name.startswith("python"):
        # `python -m runner ARGS` (the runner's name is no file) or `python script.py ARGS` (a runner script).
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[1:]
        rest = rest[2:] if rest[:1] == ["-m"] else rest[1:]
    out: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _VALUE_OPTIONS
            continue
        path = word.split("::", 1)[0]
        while path.startswith("./"):
            path = path[2:]
        if path.endswith(".py") and not path.startswith(("/", "../")):
            out.append(path)
    return tuple(dict.fromkeys(out))


def uses_xdist(words: Iterable[str]) -> bool:
    """True when pytest options `words` start pytest-xdist workers: the last `-n`/`--numprocesses` wins, as in
    pytest (`--numprocesses=auto` then `--numprocesses=0` starts none), and `--tx` starts them too."""
    items = list(words)
    workers = False
    for i, w in enumerate(items):
        name, eq, value = w.partition("=")
        if name in ("-n", "--numprocesses"):
            value = value if eq else (items[i + 1] if i + 1 < len(items) else "")
            workers = value not in ("0", "no", "")
        elif w.startswith("-n") and not w.startswith("--") and len(w) > 2:
            workers = w[2:] != "0"
        elif name == "--tx":
            return True
    return workers


def discovery_start(modules: Iterable[str], files: set[str]) -> str:
    """Where unittest's discovery finds `modules` (test modules): the directory their packages are
    imported from (the first folder above them without an `__init__.py`), "" for the root. A root
    with modules in several such places keeps "" (a bare run, as before)."""
    starts: set[str] = set()
    for m in modules:
        parent = PurePosixPath(m).parent
        while str(parent) not in (".", "") and f"{parent}/__init__.py" in files:
            parent = parent.parent
        starts.add("" if str(parent) in (".", "") else str(parent))
    return next(iter(starts)) if len(starts) == 1 else ""
