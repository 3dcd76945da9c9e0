"""ssemock: record and replay Server-Sent Events streams, faithfully or broken on purpose."""

from __future__ import annotations

from .cassette import Cassette, Chunk, End, Interaction, Request, Response
from .checkclient import check_client
from .config import Limits
from .edge.options import NetworkOptions
from .errors import (
    CassetteError,
    CassetteNotFoundError,
    ChaosError,
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
from .mockserver import MockServer
from .recorder import Recorder, RecordMode
from .redact import Filter
from .scenario import Scenario, conformance_matrix
from .sse import Comment, Decoder, Event
from .version import __version__

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteNotFoundError",
    "ChaosError",
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
    "check_client",
    "conformance_matrix",
]
