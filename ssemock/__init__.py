"""ssemock: record and replay Server-Sent Events streams, faithfully or broken on purpose.

The names below are imported when first used (PEP 562), so that a command imports only
what it needs: ``ssemock serve`` never loads the recorder or the secret scanner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    CassetteError,
    CassetteNotFoundError,
    ConfigError,
    ImportFormatError,
    JSONTooDeepError,
    NoMatchError,
    PlotError,
    RecorderConfigError,
    RecorderError,
    ScenarioError,
    ServerError,
    SSEMockError,
)
from .lazy import lazy_names
from .version import __version__

if TYPE_CHECKING:
    from .cassette import Cassette, Chunk, End, Interaction, Request, Response
    from .config import Limits
    from .edge.options import NetworkOptions
    from .mockserver import MockServer
    from .recorder import Recorder, RecordMode
    from .redact import Filter
    from .scenario import Scenario, conformance_matrix
    from .sse import Comment, Decoder, Event

_LAZY = {
    "Cassette": ".cassette", "Chunk": ".cassette", "End": ".cassette", "Interaction": ".cassette",
    "Request": ".cassette", "Response": ".cassette", "Limits": ".config", "NetworkOptions": ".edge.options",
    "MockServer": ".mockserver", "Recorder": ".recorder",
    "RecordMode": ".recorder", "Filter": ".redact", "Scenario": ".scenario", "conformance_matrix": ".scenario",
    "Comment": ".sse", "Decoder": ".sse", "Event": ".sse",
}


__getattr__ = lazy_names(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteNotFoundError",
    "Chunk",
    "Comment",
    "ConfigError",
    "Decoder",
    "End",
    "Event",
    "Filter",
    "ImportFormatError",
    "Interaction",
    "JSONTooDeepError",
    "Limits",
    "MockServer",
    "NetworkOptions",
    "NoMatchError",
    "PlotError",
    "RecordMode",
    "Recorder",
    "RecorderConfigError",
    "RecorderError",
    "Request",
    "Response",
    "SSEMockError",
    "Scenario",
    "ScenarioError",
    "ServerError",
    "__version__",
    "conformance_matrix",
]
