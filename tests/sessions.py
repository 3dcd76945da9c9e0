"""Settings of the inner pytest sessions that the plugin tests run with pytester."""

from __future__ import annotations

# Strict like the project's own settings; plugins the inner sessions do not need stay off.
INI = """
[pytest]
addopts = -p no:cacheprovider -p no:hypothesispytest -p no:benchmark
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings = error
"""
