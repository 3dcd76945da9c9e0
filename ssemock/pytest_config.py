"""The settings of one test's fake provider: the ``ssemock_config`` fixture's defaults with the marker over them.

:class:`SSEMockConfig` is what the ``ssemock_config`` fixture returns; a ``conftest.py`` or a test
module overrides the fixture to change the defaults of every test under it (pytest-recording's
``vcr_config``)::

    @pytest.fixture(scope="module")
    def ssemock_config():
        return SSEMockConfig(scenario=("keepalive",), timing_scale=0)

The marker ``@pytest.mark.ssemock(...)`` of a test (or of its module, ``pytestmark``) overrides
them argument by argument; :func:`settings_of` merges the two into :class:`Settings`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import pytest

from .body_paths import check_paths
from .chaos import Chaos
from .errors import ConfigError, short_repr
from .matching import check_match_on
from .mockserver import check_seed, check_timing_scale
from .names import scenario_names

__all__ = ["MARKER_ARGS", "SSEMockConfig", "Settings", "config_of", "marker_problem", "settings_of"]

MARKER_ARGS = ("cassette", "scenario", "matrix", "timing_scale", "target", "match_on", "ignore_body", "stubs",
               "chaos", "seed")


@dataclass(frozen=True)
class SSEMockConfig:
    """The defaults of the tests under a ``conftest.py`` or in a module (the ``ssemock_config`` fixture).

    Attributes:
        scenario: default scenario names, a tuple (one name may be a string; ``"a,b"`` is split);
            ``()``: none.
        match_on: matcher names every request must pass (``("method", "path", "body")``); None: the
            default for the cassette (see :mod:`ssemock.testing`).
        ignore_body: body paths the ``body`` matcher ignores (``("metadata.trace_id", "messages[*].id")``,
            :mod:`ssemock.body_paths`), besides each cassette's own ``match:``; ``()``: none.
        timing_scale: multiplies recorded times (0: no delays); None: the session's (ini
            ``ssemock_timing_scale``, default 1).
        target: the upstream provider URL recorded from in a record mode; None: ``--ssemock-target``
            or the ini key ``ssemock_target``.

    Raises:
        ConfigError: an empty scenario name, a string or unknown matcher in ``match_on``, a bad body path
            in ``ignore_body`` (or more than :data:`~ssemock.limits.MAX_BODY_PATHS`), a timing
            scale that is not a finite number >= 0, an empty or non-string ``target``.
    """

    scenario: tuple[str, ...] = ()
    match_on: tuple[str, ...] | None = None
    ignore_body: tuple[str, ...] = ()
    timing_scale: float | None = None
    target: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenario", scenario_names(self.scenario))
        if self.match_on is not None:
            object.__setattr__(self, "match_on", check_match_on(self.match_on))
        object.__setattr__(self, "ignore_body", check_paths(self.ignore_body, "ignore_body"))
        if self.timing_scale is not None:
            object.__setattr__(self, "timing_scale", check_timing_scale(self.timing_scale))
        if self.target is not None and not (isinstance(self.target, str) and self.target):
            raise ConfigError(f"target: expected a provider URL (str), got {short_repr(self.target)}")


_CONFIG_FIELDS = tuple(f.name for f in fields(SSEMockConfig))


@dataclass(frozen=True)
class Settings(SSEMockConfig):
    """One test's settings: its :class:`SSEMockConfig` with the marker's arguments over it.

    Attributes:
        cassette: the cassette the marker names; None: the test's own (``<test name>.yaml`` in
            its recording folder).
        stubs: the stub files the marker names (paths as written: relative to the test file).
        chaos: the faults by rate the marker gives (as ``MockServer(chaos=...)`` takes them), or None.
        seed: the seed the marker gives (of the draws and the scenarios' random choices), or None: 0.
    """

    cassette: str | None = None
    stubs: tuple[str, ...] = ()
    chaos: Any = None
    seed: int | None = None


def config_of(value: Any) -> SSEMockConfig:
    """The ``ssemock_config`` fixture's value as a :class:`SSEMockConfig`; a mapping of its fields (the
    shape of pytest-recording's ``vcr_config``) is accepted too.

    Raises:
        ConfigError: a key that is not a field, a value of the wrong kind (named), or another type.
    """
    if isinstance(value, SSEMockConfig):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"ssemock_config: expected an SSEMockConfig, got {short_repr(value)}")
    unknown = sorted(str(key) for key in value if key not in _CONFIG_FIELDS)
    if unknown:
        raise ConfigError(f"ssemock_config: unknown key {unknown[0]!r}; valid: {', '.join(_CONFIG_FIELDS)}")
    return SSEMockConfig(**value)


def settings_of(item: pytest.Item, config: SSEMockConfig, preset: str | None = None) -> Settings:
    """The settings of ``item``: ``config``, its marker's arguments over it, then the matrix ``preset``
    (a scenario name) after the scenario names. A wrong marker fails the test's set-up in one line."""
    given = {name: value for name, value in marker_options(item).items() if value is not None and name != "matrix"}
    merged = {name: getattr(config, name) for name in _CONFIG_FIELDS} | given
    if preset is not None:
        merged["scenario"] = (*scenario_names(merged["scenario"]), preset)
    stubs = merged.pop("stubs", ())
    return Settings(**merged, stubs=(stubs,) if isinstance(stubs, str) else tuple(stubs))


def marker_options(item: pytest.Item) -> dict[str, Any]:
    """The arguments of ``item``'s closest ``ssemock`` marker, checked (:func:`marker_problem`)."""
    marker = item.get_closest_marker("ssemock")
    if marker is None:
        return {}
    if marker.args:
        pytest.fail("@pytest.mark.ssemock takes keyword arguments only: " + ", ".join(MARKER_ARGS), pytrace=False)
    unknown = sorted(set(marker.kwargs) - set(MARKER_ARGS))
    if unknown:
        pytest.fail(
            f"@pytest.mark.ssemock: unknown argument {unknown[0]!r}; valid: {', '.join(MARKER_ARGS)}", pytrace=False
        )
    problem = marker_problem(marker.kwargs)
    if problem is not None:
        pytest.fail(f"@pytest.mark.ssemock: {problem}", pytrace=False)
    return dict(marker.kwargs)


def _names(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, str) and v for v in value)


_MARKER_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "cassette": ("a cassette name (str)", lambda v: isinstance(v, str) and bool(v)),
    "target": ("a provider URL (str)", lambda v: isinstance(v, str) and bool(v)),
    "matrix": ("True, False or a list of scenario names", lambda v: isinstance(v, bool) or _names(v)),
    "stubs": ("a stub file path (str) or a list of them",
              lambda v: (isinstance(v, str) and bool(v)) or v == [] or _names(v)),
}


def marker_problem(kwargs: Mapping[str, Any]) -> str | None:
    """What is wrong with the ``@pytest.mark.ssemock`` arguments ``kwargs`` (one line), or None.

    Each argument may be None (the default); otherwise ``cassette`` and ``target`` are non-empty
    strings, ``scenario`` scenario names (a tuple, or one string: :func:`~ssemock.names.scenario_names`;
    ``()`` turns a default of ``ssemock_config`` off), ``matrix`` a bool or scenario names, ``match_on``
    known matcher names, ``ignore_body`` body paths (``()`` turns a default off), ``timing_scale`` a
    finite number >= 0 (as ``MockServer`` and ``serve --timing-scale`` check), ``stubs`` stub file paths,
    ``chaos`` faults by rate (as ``MockServer(chaos=...)`` takes them), ``seed`` an integer.
    """
    for name, value in kwargs.items():
        if value is None:
            continue
        try:
            if name == "timing_scale":
                check_timing_scale(value)
            elif name == "match_on":
                check_match_on(value)  # its messages name match_on
            elif name == "ignore_body":
                check_paths(value, "ignore_body")  # its messages name ignore_body
            elif name == "scenario":
                scenario_names(value)  # its messages name scenario
            elif name == "chaos":
                Chaos.of(value)  # its messages name chaos
            elif name == "seed":
                check_seed(value)
            elif name in _MARKER_TYPES and not _MARKER_TYPES[name][1](value):
                return f"{name}: expected {_MARKER_TYPES[name][0]}, got {short_repr(value)}"
        except ConfigError as exc:
            return str(exc) if name in ("match_on", "scenario", "ignore_body", "chaos") else f"{name}: {exc}"
    return None
