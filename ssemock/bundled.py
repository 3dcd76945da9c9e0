"""Where the bundled cassettes and scenarios are: inside an installed wheel
(``ssemock/bundled/``) or at the top of a source checkout (``cassettes/``, ``scenarios/``)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["bundled_cassettes", "bundled_scenarios"]

_HERE = Path(__file__).resolve().parent


def _find(kind: str) -> Path:
    for candidate in (_HERE / "bundled" / kind, _HERE.parent / kind):
        if candidate.is_dir():
            return candidate
    return _HERE / "bundled" / kind


def bundled_cassettes() -> Path:
    """The directory of bundled real-world cassettes."""
    return _find("cassettes")


def bundled_scenarios() -> Path:
    """The directory of bundled scenario presets."""
    return _find("scenarios")
