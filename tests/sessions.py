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


def preload_clients() -> None:
    """Import the clients, and the parts they import lazily, before any in-process run.

    pytester removes the modules an in-process run imported; a later run importing them
    again would create new exception classes that the clients imported earlier do not
    catch (e.g. a cut stream surfacing as a raw transport error). The YAML parser too: ssemock
    imports it only when a file is parsed (not when its caches answer), and its C part, imported
    again by a later in-process run, reads every document as empty.
    """
    import aiohttp  # noqa: F401
    import anthropic
    import httpx
    import httpx_sse  # noqa: F401
    import openai
    import yaml

    from ssemock.cassette.read import load_yaml

    load_yaml("preloaded: true", "preload")
    yaml.safe_load("preloaded: true")

    openai.OpenAI(api_key="preload", base_url="http://127.0.0.1:9").close()
    anthropic.Anthropic(api_key="preload", base_url="http://127.0.0.1:9").close()
    httpx.Client().close()
