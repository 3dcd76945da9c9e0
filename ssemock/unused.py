"""``pytest --ssemock-report-unused``: the cassettes and interactions that no test played.

Registered by the pytest plugin only when the option is given. After each test that used
the ``sse_mock`` fixture (or its alias ``ssemock``), the interactions its journal says were
answered are noted (a test making more requests than the journal keeps, 1,000 by default, has its oldest ones
forgotten). At the end of the run, every cassette file the tests could play is listed with
what was never played:

* the tests' own cassettes: ``*.yaml`` / ``*.yml`` under ``cassettes/`` beside each collected
  test module (named by their path relative to the rootdir, as the fixture names them);
* the configured directories (``--ssemock-cassettes``, ini ``ssemock_cassettes``).

The bundled cassettes are ssemock's, not the project's, and are left out. Under
pytest-xdist each worker sends what it saw to the controller, which writes the report.
The report is a terminal summary section; it never changes the exit status.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .cassette import Cassette, load
from .errors import SSEMockError

__all__ = ["UnusedReport"]

_KEY = "ssemock_report_unused"


class UnusedReport:
    """The pytest plugin object that gathers what was played and writes the report.

    Attributes:
        played: ``(cassette name, interaction index)`` pairs answered during the run.
        folders: the ``cassettes/`` folders beside the collected test modules.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.played: set[tuple[str, int]] = set()
        self.folders: set[Path] = set()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        """Note the interactions this test played (before its fixtures are torn down)."""
        # ``sse_mock`` is in the fixture closure of every test that asked for it or for an alias (``ssemock``).
        handle = getattr(item, "funcargs", {}).get("sse_mock")
        if handle is None or getattr(handle, "recorder", None) is not None:
            return
        for entry in handle.requests:
            name, index = entry.get("cassette"), entry.get("interaction")
            if isinstance(name, str) and isinstance(index, int) and entry.get("outcome") != "refused":
                self.played.add((name, index))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.folders.update(Path(item.path).parent / "cassettes" for item in session.items)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if output is not None:  # an xdist worker: hand what it saw to the controller
            output[_KEY] = {"played": sorted(self.played), "folders": sorted(map(str, self.folders))}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist: a worker finished; merge what it saw."""
        seen = getattr(node, "workeroutput", {}).get(_KEY, {})
        self.played.update((str(name), int(index)) for name, index in seen.get("played", []))
        self.folders.update(Path(folder) for folder in seen.get("folders", []))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput"):
            return
        terminalreporter.section("ssemock: cassettes and interactions no test played")
        lines = self.lines()
        for line in lines or ["every interaction of every cassette was played"]:
            terminalreporter.write_line(line)

    def lines(self) -> list[str]:
        """One line per cassette never played, per interaction of a cassette partly played, and per
        file that does not load (``PATH: not read, so not checked: WHY``)."""
        out = []
        cassettes, unread = self._cassettes()
        for path, names, cassette in cassettes:
            played = {index for name, index in self.played if name in names}
            count = len(cassette.interactions)
            if not played:
                out.append(f"{path}: never played ({count} interaction(s))")
                continue
            for index, inter in enumerate(cassette.interactions):
                if index not in played:
                    out.append(f"{path}: interaction {index} ({inter.request.method} {inter.request.path}) "
                               "never played")
        return out + [f"{path}: not read, so not checked: {why}" for path, why in unread]

    def _cassettes(self) -> tuple[list[tuple[Path, set[str], Cassette]], list[tuple[Path, str]]]:
        """Every cassette file the tests could play: (path, the names it is played under, cassette),
        and the files that do not load: (path, why)."""
        root = self.config.rootpath
        names: dict[Path, set[str]] = {}
        given: dict[Path, Path] = {}  # the path as found, for the files that do not load

        def add(file: Path, name: str) -> None:
            names.setdefault(file.resolve(), set()).add(name)
            given.setdefault(file.resolve(), file.absolute())

        for folder in self.folders:
            for file in _yaml_files(folder):
                key = file.resolve().relative_to(root) if file.resolve().is_relative_to(root) else file.resolve()
                add(file, key.with_suffix("").as_posix())
        configured = [Path(d) for d in self.config.getoption("ssemock_cassettes")]
        configured += [Path(d) for d in self.config.getini("ssemock_cassettes")]
        for folder in configured:
            for file in _yaml_files(folder):
                add(file, file.relative_to(folder).with_suffix("").as_posix())
        out, unread = [], []
        for path in sorted(names):
            try:
                cassette = load(path)
            except (SSEMockError, OSError) as exc:  # junk, a FIFO, a dangling link: said, not skipped
                unread.append((_shown(given[path], root), _why(exc, path, given[path])))
                continue
            out.append((_shown(path, root), names[path], cassette))
        return out, unread


def _yaml_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for pattern in ("*.yaml", "*.yml") for p in folder.rglob(pattern)
            if not any(part.startswith(".") for part in p.relative_to(folder).parts)]


def _why(exc: Exception, path: Path, found: Path) -> str:
    """The error's message without the file name it starts with (the line names the file)."""
    if found.is_symlink() and not found.exists():
        return "a symbolic link to a missing file"
    text = str(exc) or type(exc).__name__
    for prefix in (f"{path}: ", f"{path}:"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _shown(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path
