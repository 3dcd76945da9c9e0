"""``ssemock check-client``: a graded report card for any SSE client.

The client command runs once per case (a recording as recorded, then under each preset) against its own
in-process replay server (:mod:`.run`), prints what it understood by the output contract
(:mod:`.contract`), and is graded case by case (:mod:`.cases`, :mod:`.grade`) against the WHATWG
reference decoder (:mod:`.reference`) and its own clean run; :mod:`.report` writes the table, JSON and
JUnit XML, :mod:`.html` the HTML page. :func:`check_client` does the same from Python (pytest).

Modules: ``contract`` (stdout read), ``cases`` (cases and rules), ``reference`` (what a correct reader
prints), ``run`` (processes and servers), ``compare`` (first difference), ``grade``, ``reproduce`` (the
one-line command against ``ssemock serve``), ``shrink`` (a failure's fewest steps; with ``chunking`` and
``ddmin``, its fewest chunk boundaries), ``report``, ``html``, ``check`` (a whole run), ``cli``, and ``reader``
(the reference reader, ``python -m ssemock.checkclient.reader``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import SSEMockError
from .check import CheckOptions, check
from .report import Report, table_lines

__all__ = ["CheckOptions", "ClientCheckFailed", "Report", "check", "check_client"]


class ClientCheckFailed(SSEMockError, AssertionError):
    """:func:`check_client` found failing cases; ``report`` holds them all, the message the table."""

    def __init__(self, report: Report) -> None:
        self.report = report
        super().__init__("ssemock check-client: some cases failed\n" + "\n".join(table_lines(report, width=160)))


def check_client(command: Sequence[str], **options: Any) -> Report:
    """Grade ``command`` as ``ssemock check-client`` does and return the :class:`Report`.

    Args:
        command: the client command and its arguments (``["python", "client.py"]``).
        **options: the fields of :class:`CheckOptions` (``cassettes=("NAME",)``, ``scenarios=(...)``,
            ``client_timeout=2.0``, ``timeout``, ``jobs``, ...).

    Raises:
        ClientCheckFailed: a case failed (an ``AssertionError``: in a test, it fails the test with the
            report's table).
        ConfigError: see :func:`ssemock.checkclient.check.check`.
    """
    report = check(list(command), CheckOptions(**options))
    if report.failed:
        raise ClientCheckFailed(report)
    return report
