"""Shared test fixtures: the real recordings and the bundled cassettes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssemock.bundled import bundled_cassettes
from ssemock.cassette import Cassette, load_cassettes

REALWORLD = Path(__file__).parent / "data" / "realworld"


@pytest.fixture(scope="session")
def bundled() -> dict[str, Cassette]:
    """The bundled cassettes by name."""
    return load_cassettes(bundled_cassettes())
