"""A stub file shown as a cassette: what each stub would send (``ssemock inspect STUBS.yaml``)."""

from __future__ import annotations

from pathlib import Path

from ..cassette import Cassette, Interaction, Request
from ..errors import ConfigError
from .conversation import Conversation
from .model import PROVIDERS, Stub
from .synth import synthesize

__all__ = ["PATHS", "stub_cassette"]

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/{model}:streamGenerateContent",
    "openrouter": "/api/v1/chat/completions",
}
"""The request path shown for each provider (``{model}``: the model name)."""


def stub_cassette(
    stubs: list[Stub], provider: str, *, name: str = "stubs", model: str = "ssemock-model",
) -> Cassette:
    """One interaction per stub: its streamed answer to a request on ``provider``'s path, asked
    with the stub's own conditions (its provider, model and text if it names them).

    Raises:
        ConfigError: ``provider`` is not one of :data:`~ssemock.stubs.model.PROVIDERS`.
    """
    if provider not in PROVIDERS:
        raise ConfigError(f"provider: expected one of {', '.join(PROVIDERS)}, got {provider!r}")
    interactions = []
    for stub in stubs:
        match = stub.match
        asked = match.provider or provider
        asked_model = match.model or model
        path = match.path or PATHS[asked].format(model=asked_model)
        step = match.step or 0
        conv = Conversation(
            provider=asked, path=path, model=asked_model, stream=True,
            last_user=match.equals or match.contains or "Hello", tool_result=bool(match.tool_result or step),
            turn=match.turn or step + 1, step=step, include_usage=True, sse=True,
        )
        query = [("alt", "sse")] if asked == "gemini" else []
        interactions.append(Interaction(Request("POST", path, query), synthesize(stub, conv)))
    return Cassette(name, interactions, provenance={"synthesized_from": name, "stubs": [s.name for s in stubs]},
                    path=Path(name))
