"""Collects the code blocks of README.md and docs/**/*.md as tests (see tests/docs_examples.py)."""

from tests.docs_examples import sybil

pytest_collect_file = sybil().pytest()
