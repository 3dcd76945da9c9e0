"""Every bound on input, its default, and the one range check used for files and options.

Defaults (the docs' Limits reference, generated, lists them with their options and errors):

=========================  ===============  =============================================
bound                      default          where
=========================  ===============  =============================================
request body               32 MiB           :data:`MAX_REQUEST_BODY`; 413 ``ssemock_body_too_large``
JSON nesting of a body     128 levels       :data:`MAX_JSON_DEPTH`; 400 ``ssemock_json_too_deep``
JSON parsed for matching   1 MiB            :data:`MAX_JSON_PARSE`; larger bodies compare as bytes
journal entries            1,000            :data:`JOURNAL_CAPACITY` (oldest dropped first)
journal body               64 KiB           :data:`JOURNAL_BODY`; larger kept as sha256 + size + prefix
body paths (ignore, drop)  64, 256 chars,   :data:`MAX_BODY_PATHS`, :data:`MAX_BODY_PATH_CHARS`,
                           32 steps each    :data:`MAX_BODY_PATH_STEPS`
cassette times             24 h             :data:`MAX_CASSETTE_SECONDS` (``t``, ``start``, ``end.t``)
cassette file              512 MiB          :data:`MAX_CASSETTE_FILE`
recorded body, decoded     256 MiB          :data:`MAX_DECODED_BODY` (an encoded answer decoding to more: not recorded)
interactions, chunks       1,000,000        :data:`MAX_ITEMS` (per cassette, per response; counted while loading)
YAML nodes in one file     32,000,000       :data:`MAX_YAML_NODES` (scalars, sequences, mappings)
YAML nodes, full loader    1,000,000        :data:`MAX_YAML_NODES_FULL` (YAML ssemock never writes)
YAML nodes per character   1 per 8          :data:`YAML_NODE_CHARS` (past the first 1,000,000 nodes)
HAR entries imported       10,000           :data:`MAX_HAR_ENTRIES` (``import har --max-entries``)
cassette file, ``check``   10 MiB           :data:`MAX_CHECK_SIZE` (``ssemock check --max-size``)
response headers, cassette 90, 8,190 B/line   :data:`MAX_RESPONSE_HEADERS`, :data:`MAX_HEADER_LINE`,
                           64 KiB in all    :data:`MAX_RESPONSE_HEADER_BYTES`
scenario file              1 MiB            :data:`MAX_SCENARIO_FILE`
steps in one scenario      100              :data:`MAX_STEPS`
scenarios per request      8                :data:`MAX_SCENARIOS`; 400 ``ssemock_too_many_scenarios``
run-time stubs             10,000           :data:`MAX_ADDED_STUBS` (``POST /_ssemock/stubs``); 400
run-time scenarios         64               :data:`MAX_ADDED_SCENARIOS` (``PUT /_ssemock/scenario``); 400
added by scenario steps    256 MiB          :data:`MAX_SCENARIO_GROWTH` per response (each added line
                                            counts :data:`LINE_COST` more); 500 ``ssemock_scenario_too_large``
held to shape, recorder     64 MiB           :data:`MAX_HELD_BODY` (``record --scenario``; past it sent unshaped)
chaos rules                16, 32 rates     :data:`MAX_CHAOS_RULES`, :data:`MAX_CHAOS_RATES` per rule (``--chaos``);
                           each in [0, 1]   a rule's rates sum to at most 1; a path glob :data:`MAX_CHAOS_GLOB` chars
=========================  ===============  =============================================

:class:`Field` (with :func:`number` and :func:`integer`) is the one range check: scenario
steps and cassette fields check file values with it (errors name file and field), and
:func:`check_option` checks options with it (:class:`ConfigError`): those of the option records
(:mod:`ssemock.config`, where the bounds given as options are fields of :class:`~ssemock.config.Limits`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from .errors import CassetteError, ConfigError, JSONTooDeepError, ScenarioError, short_repr

__all__ = [
    "JOURNAL_BODY",
    "JOURNAL_CAPACITY",
    "JOURNAL_PREFIX",
    "JSON_DEPTH_CEILING",
    "LINE_COST",
    "MAX_ADDED_SCENARIOS",
    "MAX_ADDED_STUBS",
    "MAX_BODY_PATHS",
    "MAX_BODY_PATH_CHARS",
    "MAX_BODY_PATH_STEPS",
    "MAX_CASSETTE_FILE",
    "MAX_CASSETTE_SECONDS",
    "MAX_CHAOS_GLOB",
    "MAX_CHAOS_RATES",
    "MAX_CHAOS_RULES",
    "MAX_CHECK_SIZE",
    "MAX_DECODED_BODY",
    "MAX_HAR_ENTRIES",
    "MAX_HEADER_LINE",
    "MAX_HELD_BODY",
    "MAX_INT_DIGITS",
    "MAX_ITEMS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_PARSE",
    "MAX_REQUEST_BODY",
    "MAX_RESPONSE_HEADERS",
    "MAX_RESPONSE_HEADER_BYTES",
    "MAX_SCENARIOS",
    "MAX_SCENARIO_FILE",
    "MAX_SCENARIO_GROWTH",
    "MAX_STEPS",
    "MAX_YAML_NODES",
    "MAX_YAML_NODES_FULL",
    "NOT_JSON",
    "YAML_NODE_CHARS",
    "Field",
    "bounds_text",
    "check_option",
    "claim_name",
    "integer",
    "is_integer",
    "is_number",
    "json_depth_exceeds",
    "load_json",
    "number",
    "plain_json_problem",
    "show_size",
    "within",
]

MAX_REQUEST_BODY = 32 * 1024 * 1024
"""Largest request body the replay server and the recorder read, in bytes (32 MiB)."""
MAX_JSON_DEPTH = 128
"""Deepest nesting of arrays and objects accepted in a JSON body (request or cassette)."""
MAX_INT_DIGITS = 4300
"""Most digits of an integer read from a YAML or HAR file: Python's own bound for turning text into
an integer (and back), whatever ``sys.set_int_max_str_digits`` says."""
JSON_DEPTH_CEILING = 256
"""Highest ``max_json_depth`` option: deeper values would exhaust Python's recursion limit
in matching, the journal and deep copies."""
MAX_JSON_PARSE = 1024 * 1024
"""Largest body parsed as JSON for matching and the journal, in bytes (1 MiB): parsing holds
the interpreter, so larger bodies are compared as bytes (the recorder stores them by digest)."""
JOURNAL_CAPACITY = 1000
"""Journal entries kept by default; the oldest is dropped first (a ring)."""
JOURNAL_BODY = 64 * 1024
"""Request bodies larger than this many bytes are journaled as sha256 + size + prefix."""
JOURNAL_PREFIX = 1024
"""Bytes of such a body kept in the journal, as text."""
MAX_CASSETTE_SECONDS = 86_400.0
"""Latest time in a cassette (``t``, ``start``, ``end.t``, ``interval`` steps), in seconds (24 h)."""
MAX_CASSETTE_FILE = 512 * 1024 * 1024
"""Largest cassette file read, in bytes (512 MiB)."""
MAX_DECODED_BODY = 256 * 1024 * 1024
"""Most bytes the recorder decodes of an encoded answer (gzip, deflate) to scan it, in bytes (256 MiB): a
body that decodes to more (a decompression bomb: 1 MB of gzip makes 1 GB) is not recorded, as one that
does not decode (stored decoded, it would pass the cassette file bound)."""
MAX_CHECK_SIZE = 10 * 1024 * 1024
"""Largest cassette file ``ssemock check`` passes by default, in bytes (10 MiB: what a repository
should hold; ``--max-size``)."""
MAX_HAR_ENTRIES = 10_000
"""Most entries in one HAR file imported (``ssemock import har --max-entries``)."""
MAX_RESPONSE_HEADERS = 90
"""Most response headers in one recorded interaction: Python's ``http.client`` refuses an answer with more
than 100 header lines, and the replay server adds up to ten of its own (``X-SSEMock-*``, ``Date``...)."""
MAX_HEADER_LINE = 8190
"""Longest response header line (``Name: value``) in a cassette, in bytes: aiohttp's client (and its
server, for requests) refuses longer lines (``max_line_size``, ``max_field_size``)."""
MAX_RESPONSE_HEADER_BYTES = 64 * 1024
"""Most bytes of response header lines in one recorded interaction, in bytes (64 KiB: ``http.client`` and
most clients refuse more)."""
MAX_SCENARIO_FILE = 1024 * 1024
"""Largest scenario file read, in bytes (1 MiB)."""
MAX_STEPS = 100
"""Most steps in one scenario (file or mapping): each step is a pass over the whole response, so with
:data:`MAX_SCENARIOS` composed one answer takes at most 800 passes (30,000 steps of a 1 MiB file,
each changing nothing, took 26 s of a plan thread for a 10 KB stream)."""
MAX_SCENARIOS = 8
"""Most scenario names composed for one request (``X-SSEMock-Scenario: A,B`` or ``/_ssemock/s/A,B/``):
each may multiply the work of building the answer."""
MAX_ADDED_STUBS = 10_000
"""Most stubs added to a running server in all (``POST /_ssemock/stubs``, ``MockServer.add_stubs``; a tool
loop counts one per step) until they are cleared: more is ``400 ssemock_invalid_change`` naming ``stubs``."""
MAX_ADDED_SCENARIOS = 64
"""Most scenarios a running server is given as documents (``PUT /_ssemock/scenario``,
``MockServer.set_scenario``) until they are cleared; one of the same name replaces the earlier one."""
MAX_BODY_PATHS = 64
"""Most body paths ignored in matching (``ignore_body``, ``--ignore-body-field``) or dropped by the recorder
(``--drop-body-field``), counted per list (each path is one pass over a body)."""
MAX_BODY_PATH_CHARS = 256
"""Longest body path (``metadata.trace_id``, ``messages[*].id``), in characters."""
MAX_BODY_PATH_STEPS = 32
"""Most steps (keys, ``*`` and ``[N]``) of one body path."""
MAX_HELD_BODY = 64 * 1024 * 1024
"""Most bytes of an upstream answer the recorder holds back to shape under a scenario (``ssemock record
--scenario`` / ``--chaos``) before its client gets any, in bytes (64 MiB): past it the rest goes to the client
as it comes, unshaped (its progress line says so)."""
MAX_CHAOS_RULES = 16
"""Most chaos rules of one server or recorder (``--chaos`` given this many times; :mod:`ssemock.chaos`): each
request looks for its rule among them."""
MAX_CHAOS_RATES = 32
"""Most scenarios with a rate in one chaos rule (``cut-mid-event=0.05,http-429=0.02`` is 2)."""
MAX_CHAOS_GLOB = 200
"""Most characters of a chaos rule's path glob (``path=/v1/chat/*:``)."""
MAX_ITEMS = 1_000_000
"""Most interactions in a cassette, and most chunks or events in one response: counted while the
YAML loads, so a longer list is refused before the rest of it is built."""
MAX_YAML_NODES = 32 * MAX_ITEMS
"""Most YAML nodes (scalars, sequences and mappings) in one cassette, scenario, stub or imported
VCR.py file: 32,000,000, counted while it loads. A recorded chunk ``{t: SECONDS, text: TEXT}`` is
5 nodes, so this is room for 6 million chunks with their interactions: a 512 MiB cassette fits
when its chunks average 85 bytes of YAML or more (the bundled recordings about 190). Without
it, ``[{}, {}, ...]`` anywhere (in a header list, a JSON body) would take about 80 bytes of
memory per 3 bytes of text: 14 GB for a file within the 512 MiB bound."""
YAML_NODE_CHARS = 8
"""Characters of YAML text each node takes at least, on average over the text read so far, once a file
has more than :data:`MAX_YAML_NODES_FULL` nodes (counted while it loads): a loaded node takes 50 to 90
bytes of memory, so a file's data stays within about ten times the file, plus 80 MB for the first
million nodes, and ``[[], [], ...]`` (4 characters a node) stops within its first 8 MB whatever its
size. A recorded chunk ``- {t: SECONDS, text: TEXT}`` is 5 nodes in 30 characters and its text; the
bundled recordings average 20 to 100 characters a node."""
MAX_YAML_NODES_FULL = MAX_ITEMS
"""Most YAML nodes in a file that holds what ssemock never writes (a tag, a timestamp such as an
unquoted date, a merge key...): such a file is read by PyYAML's full safe loader, which takes about
700 bytes of memory per node (690 MB for a million ``{}``), against 75 for ssemock's own. A
recorded cassette of 35 MB has about a million nodes."""
MAX_SCENARIO_GROWTH = 256 * 1024 * 1024
"""Most bytes the steps of a request's scenarios may add to its response body, in bytes (256 MiB;
``Limits(max_scenario_growth=)``, ``ssemock serve --limit max_scenario_growth=BYTES``). What a step writes
into every event (``edit``, ``replace``, ``extra-fields``, ``keepalive``...) grows with the stream:
past the bound the request is answered 500 ``ssemock_scenario_too_large`` and nothing is sent.
Each line a step adds counts :data:`LINE_COST` bytes more."""
LINE_COST = 128
"""Bytes each line added by a scenario step counts besides its own bytes, against
:data:`MAX_SCENARIO_GROWTH`: what a line takes in memory (about 190 bytes on CPython 3.11 for a short
one) while the steps run, so that many short lines are bounded as well as a few long ones."""

DEFAULT_PACE = 0.002
"""Seconds between two writes of a paced response where the client's reads cannot be seen, by
default (``fragment.pace``): enough on a loaded 2-core machine for a reader in another process to
take each chunk in its own read (see :mod:`ssemock.pacing`, ``benchmarks/fragment_delivery.py``)."""
MAX_PACE = 60.0
"""Largest ``fragment.pace``, in seconds."""
DEFAULT_BUDGET = 2.0
"""Seconds of pacing one response gets at most, by default (``fragment.budget``)."""
MAX_BUDGET = 600.0
"""Largest ``fragment.budget``, in seconds (ten minutes)."""


class Field:
    """How to check one value read from a file or given as an option.

    Attributes:
        expected: what is valid, as shown in errors (``"an integer >= 1"``).
        check: returns True for a valid value.
        schema: the same rule as a JSON Schema (draft 2020-12) fragment, for :mod:`ssemock.schemas`; it
            accepts every value ``check`` accepts (and, where JSON Schema can say it, nothing more).
            Default: any value.
    """

    __slots__ = ("check", "expected", "schema")

    def __init__(self, expected: str, check: Callable[[Any], bool], schema: dict[str, Any] | None = None) -> None:
        self.expected = expected
        self.check = check
        self.schema: dict[str, Any] = {} if schema is None else schema


def is_number(value: Any) -> bool:
    """An int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    """An int, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def show_size(value: float) -> str:
    """A size in bytes as messages show it: ``3600``, ``67108864 (64 MiB)``, ``65536 (64 KiB)``
    (a whole number of MiB or KiB is named so)."""
    if isinstance(value, int):
        for unit, size in (("MiB", 1024 * 1024), ("KiB", 1024)):
            if value >= size and value % size == 0:
                return f"{value} ({value // size} {unit})"
        return str(value)
    return f"{value:g}"


def _show(value: float, in_bytes: bool) -> str:
    if in_bytes:
        return show_size(value)
    return str(value) if isinstance(value, int) else f"{value:g}"


def bounds_text(minimum: float | None, maximum: float | None, *, in_bytes: bool = False) -> str:
    """`` from 0 to 3600``, `` >= 1``, `` <= 5`` or ``""``; ``in_bytes``: the bounds are sizes in
    bytes (:func:`show_size`: `` from 1 to 67108864 (64 MiB)``), else plain numbers (milliseconds,
    counts: `` from 0 to 86400000``)."""
    if minimum is not None and maximum is not None:
        return f" from {_show(minimum, in_bytes)} to {_show(maximum, in_bytes)}"
    if minimum is not None:
        return f" >= {_show(minimum, in_bytes)}"
    return "" if maximum is None else f" <= {_show(maximum, in_bytes)}"


def within(value: float, minimum: float | None, maximum: float | None) -> bool:
    """``minimum <= value <= maximum`` (None: unbounded); False for NaN."""
    # NaN fails both comparisons; infinities fail a finite maximum.
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def number(minimum: float = 0.0, maximum: float = 3600.0, *, optional: bool = False) -> Field:
    """A number (int or float) from ``minimum`` to ``maximum``; seconds unless the name says otherwise."""
    suffix = " or null" if optional else ""
    return Field(
        f"a number{bounds_text(minimum, maximum)}{suffix}",
        lambda v: (optional and v is None) or (is_number(v) and within(v, minimum, maximum)),
        nullable(bounded("number", minimum, maximum), optional),
    )


def integer(
    minimum: int | None = 0, maximum: int | None = None, *, optional: bool = False, in_bytes: bool = False,
) -> Field:
    """An integer from ``minimum`` (None: any, negative ones counting from the end) to ``maximum`` (None: any);
    ``in_bytes``: a size in bytes (its bounds shown in MiB or KiB too, :func:`show_size`)."""
    suffix = " or null" if optional else ""
    return Field(
        f"an integer{bounds_text(minimum, maximum, in_bytes=in_bytes)}{suffix}",
        lambda v: (optional and v is None) or (is_integer(v) and within(v, minimum, maximum)),
        nullable(bounded("integer", minimum, maximum), optional),
    )


def bounded(kind: str, minimum: float | None, maximum: float | None) -> dict[str, Any]:
    """The JSON Schema of a ``kind`` (``number`` or ``integer``) from ``minimum`` to ``maximum`` (None: unbounded)."""
    out: dict[str, Any] = {"type": kind}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def string(*, minimum: int = 0, maximum: int | None = None, without: str = "") -> dict[str, Any]:
    """The JSON Schema of a string of ``minimum`` to ``maximum`` characters, none of them in ``without``."""
    out: dict[str, Any] = {"type": "string"}
    if minimum:
        out["minLength"] = minimum
    if maximum is not None:
        out["maxLength"] = maximum
    if without:  # a search for any of them (the same in ECMA 262 and Python regular expressions)
        out["not"] = {"type": "string", "pattern": "[" + "".join(f"\\u{ord(c):04x}" for c in without) + "]"}
    return out


def whole(pattern: str) -> str:
    """A JSON Schema ``pattern`` matching all of a string, in ECMA 262 and Python alike (Python's ``$`` also
    matches before a final line feed, so the end is a look-ahead for no character at all)."""
    return f"^(?:{pattern})(?![\\s\\S])"


def nullable(schema: dict[str, Any], optional: bool = True) -> dict[str, Any]:
    """``schema``, or null too when ``optional``."""
    return {"anyOf": [schema, {"type": "null"}]} if optional else schema


def check_option(name: str, value: Any, field: Field, error: type[ConfigError] | type[ValueError] = ConfigError) -> Any:
    """Return ``value`` if ``field`` accepts it, else raise ``error`` (:class:`ConfigError`) naming the option."""
    if not field.check(value):
        raise error(f"{name}: expected {field.expected}, got {short_repr(value)}")
    return value


def claim_name(claimed: dict[str, str], name: str, file: str | os.PathLike[str] | None,
               error: type[CassetteError] | type[ScenarioError], kind: str) -> None:
    """Note that ``file`` defines the ``kind`` (cassette, scenario) ``name``.

    Raises:
        CassetteError or ScenarioError (``error``): another file already defines ``name``;
            the message names both files.
    """
    if file is None:
        return
    other = claimed.setdefault(name, str(file))
    if other != str(file):
        raise error(str(file), "name", f"a {kind} name used by one file only: {other} already defines it", name)


# ---- JSON ---------------------------------------------------------------------------------
class _NotJSON:
    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJSON()
"""What :func:`load_json` returns for a body that is empty, not JSON, or too large to parse."""


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``value`` nests lists and dicts more than ``limit`` deep (iterative: no recursion;
    a container holding no container costs C-level passes over its items, :data:`_SLICE` at a
    time, so that a thread running it lets the event loop's thread in between)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        if len(children) <= _SLICE:
            if _CONTAINERS.isdisjoint(map(type, children)):
                continue
        elif all(_CONTAINERS.isdisjoint(map(type, piece)) for piece in _slices(children)):
            continue
        stack.extend((child, depth + 1) for child in children if type(child) in _CONTAINERS)
    return False


_SLICE = 16384  # items of one container checked by one C-level pass


def _slices(children: Any) -> Iterator[Any]:
    items = children if isinstance(children, list) else list(children)
    for start in range(0, len(items), _SLICE):
        yield items[start:start + _SLICE]


_CONTAINERS = frozenset({dict, list})  # what json.loads builds; subclasses are not JSON values


def plain_json_problem(value: Any, *, max_bytes: int | None = None, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """What keeps ``value`` from being plain JSON a provider could send, or None when nothing does:
    nested deeper than ``max_depth`` levels, holding NaN, an infinity, a lone surrogate (RFC 8259
    sections 6 and 8.1) or an object JSON has no form for, or over ``max_bytes`` bytes of UTF-8 JSON.
    The one check of stub arguments and bodies, scenario payloads and provider error fields."""
    if json_depth_exceeds(value, max_depth):
        return f"nested deeper than {max_depth} levels"
    try:
        # unescaped (ensure_ascii=False), so that a lone surrogate fails to encode here
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8"))
    except RecursionError:  # tuples and other sequences json.dumps accepts, nested too deep
        return f"nested deeper than {max_depth} levels"
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return f"not plain JSON (finite numbers, text without lone surrogates): {exc}"
    if max_bytes is not None and size > max_bytes:
        return f"{size} bytes as JSON, over {max_bytes}"
    return None


def load_json(body: bytes | None, *, max_depth: int = MAX_JSON_DEPTH, max_size: int = MAX_JSON_PARSE) -> Any:
    """``body`` parsed as JSON, or :data:`NOT_JSON` when it is empty, not JSON or over ``max_size`` bytes.

    Raises:
        JSONTooDeepError: valid JSON nested deeper than ``max_depth`` levels.
    """
    if not body or len(body) > max_size:
        return NOT_JSON
    try:
        value = json.loads(body)
    except RecursionError:
        raise JSONTooDeepError(max_depth) from None
    except (ValueError, UnicodeDecodeError):
        return NOT_JSON
    if _may_nest_deeper(body, max_depth) and json_depth_exceeds(value, max_depth):
        raise JSONTooDeepError(max_depth)
    return value


_COUNTED = 64 * 1024
"""Bodies of up to this many bytes have their brackets counted before their depth is walked."""


def _may_nest_deeper(body: bytes, limit: int) -> bool:
    """False when JSON text ``body`` cannot nest more than ``limit`` deep: each level opens with its own
    ``[`` or ``{``, and in every encoding JSON may use (UTF-8, -16, -32) each of them holds its byte
    (a bracket in a string only counts one more). Counted for small bodies only (two passes in C)."""
    return len(body) > limit and (len(body) > _COUNTED or body.count(b"[") + body.count(b"{") > limit)
