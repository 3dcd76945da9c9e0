"""The network edge of the replay server and the recorder.

Modules: :mod:`.options` (:class:`NetworkOptions`: header and body timeouts, listen
backlog, stop grace, allowed host names), :mod:`.guard` (the admin API answers same-origin
requests under a known ``Host`` only), :mod:`.framing` (chunked, length or
close-delimited bodies; HTTP/1.0), :mod:`.logs` (one access line per request, single-line
errors), :mod:`.runner` (starting a server with all of it), :mod:`.replies` (the JSON answer of every refusal),
:mod:`.cors` (which web pages may read replay answers; imported by the replay server only), :mod:`.body`
(body chunks written at once, for the sending layer).
"""

from .framing import abort_connection, set_framing
from .logs import ACCESS_NOTE, configure_logging
from .options import NetworkOptions, is_loopback, port_hint
from .replies import error_response, refuse
from .runner import activity, start_runner, stopping

__all__ = [
    "ACCESS_NOTE",
    "NetworkOptions",
    "abort_connection",
    "activity",
    "configure_logging",
    "error_response",
    "is_loopback",
    "port_hint",
    "refuse",
    "set_framing",
    "start_runner",
    "stopping",
]
