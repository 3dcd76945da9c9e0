"""OpenAI Responses API (``POST /v1/responses``; also OpenRouter's ``/api/v1/responses``, which copies it).

Recognised by a path ending in ``/responses`` or a ``"type": "response.…"`` payload.

Error shapes:

* mid-stream, as in the bundled recording ``openai-responses-error-insufficient-quota``:
  ``event: error`` with ``{"type": "error", "sequence_number", "error": {"type", "code", "message",
  "param"}}``, then ``event: response.failed`` whose ``response`` is the last one sent (``response.created``
  / ``in_progress``) with ``status: "failed"`` and ``error: {"code", "message"}``; sequence numbers go on
  from the last event sent. Form ``json``: the error payload alone, bare.
* HTTP: the OpenAI error object, as for Chat Completions (:mod:`.openai_chat`).

Keys, headers and environment are those of :mod:`.openai_chat` (same service).
"""

from __future__ import annotations

import copy
import email.utils
import re
from dataclasses import replace
from typing import Any

from .base import ErrorSpec, Provider, SentPayloads, chosen, dump
from .chat import by_status, last_payload
from .openai_chat import HTTP_MESSAGES, TYPES
from .openai_chat import PROVIDER as CHAT
from .synthesis import ALNUM, HEX, Piece, Script, Synthesis, Template, dumps, nearest, run, slot

__all__ = ["PROVIDER", "SYNTHESIS"]

MID_STREAM_STATUS = 500
_EVENT = re.compile(r'"type"\s*:\s*"response\.')


def recognise(path: str, head: str) -> bool:
    """A ``…/responses`` path, or a payload typed ``response.…``."""
    return path.endswith("/responses") or _EVENT.search(head) is not None


def _sequence(sent: SentPayloads) -> int:
    value = last_payload(sent).get("sequence_number")
    return value + 1 if isinstance(value, int) and not isinstance(value, bool) else len(sent)


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``event: error`` then ``event: response.failed`` (see the module docstring)."""
    status = spec.status_or(MID_STREAM_STATUS)
    kind = chosen(spec.type, by_status(TYPES, status, "invalid_request_error"))
    code = chosen(spec.code, kind)
    seq = _sequence(sent)
    error = {"type": "error", "sequence_number": seq,
             "error": spec.fill({"type": kind, "code": code, "message": spec.message, "param": None})}
    if chosen(spec.form, "sse") == "json":
        return [dump(error), ""]
    earlier = (p["response"] for p in reversed(sent) if isinstance(p.get("response"), dict))
    response: dict[str, Any] = copy.deepcopy(next(earlier, {}))
    response["status"] = "failed"
    response["error"] = {"code": code, "message": spec.message}
    failed = {"type": "response.failed", "sequence_number": seq + 1, "response": response}
    return ["event: error", f"data: {dump(error)}", "", "event: response.failed", f"data: {dump(failed)}", ""]


PROVIDER = Provider(
    name="openai-responses",
    http_messages=HTTP_MESSAGES,
    title="OpenAI Responses API",
    recognise=recognise,
    stream_error=stream_error,
    http_error=CHAT.http_error,
    key_shapes=CHAT.key_shapes,
    secret_request_headers=CHAT.secret_request_headers,
    secret_response_headers=CHAT.secret_response_headers,
    env=CHAT.env,
)


# ---- synthesis -------------------------------------------------------------------------------------
# Synthesis (answers without a recording, see ssemock.stubs):
# OpenAI Responses, after ``openai-responses-function-call`` (gpt-5.5, 2026).
#
# Every event has ``event: TYPE`` and a ``sequence_number`` counting from 0:
# ``response.created``, ``response.in_progress``, then per output item
# ``response.output_item.added`` … ``response.output_item.done`` (a ``reasoning`` item with
# ``response.reasoning_summary_*`` events; a ``message`` item with
# ``response.content_part.added``, ``response.output_text.delta`` per token (or
# ``response.refusal.delta``), ``response.output_text.done``, ``response.content_part.done``;
# a ``function_call`` item per tool call with ``response.function_call_arguments.delta`` per
# token and ``.done``), and ``response.completed`` (``response.incomplete`` for a ``length``
# finish) carrying the whole response and its usage.


def _synth_call_id(script: Script) -> str:
    return "call_" + script.ident(ALNUM, 24)


def _response_id(script: Script) -> str:
    """``resp_`` and 50 hex digits, drawn once per answer."""
    return script.named("resp", HEX, 50, "resp_")


def _item_id(script: Script, prefix: str) -> str:
    """``msg_`` / ``fc_`` / ``rs_``, the response id's first 16 hex digits, 34 more (as the API does)."""
    return prefix + "_" + _response_id(script)[5:21] + script.ident(HEX, 34)


def _tools(script: Script) -> list[Any]:
    tools = script.conv.body.get("tools")
    out = []
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and tool.get("type") == "function":
            given = tool.get("parameters")
            params = dict(given) if isinstance(given, dict) else {}
            params.setdefault("additionalProperties", False)
            out.append({"type": "function", "description": tool.get("description"), "name": tool.get("name"),
                        "parameters": params, "strict": tool.get("strict", True)})
    return out


def _response(script: Script, status: str, output: list[Any], usage: dict[str, Any] | None) -> dict[str, Any]:
    body = script.conv.body
    asked = body.get("reasoning")
    reasoning: dict[str, Any] = asked if isinstance(asked, dict) else {}
    incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
    return {
        "id": _response_id(script), "object": "response", "created_at": script.created,
        "status": status, "background": False,
        "completed_at": script.created + 1 if status != "in_progress" else None, "error": None,
        "frequency_penalty": 0.0, "incomplete_details": incomplete, "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"), "max_tool_calls": None, "model": script.model,
        "moderation": None, "output": output, "parallel_tool_calls": True, "presence_penalty": 0.0,
        "previous_response_id": body.get("previous_response_id"), "prompt_cache_key": None,
        "prompt_cache_retention": "24h",
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "safety_identifier": None, "service_tier": "auto" if status == "in_progress" else "default",
        "store": bool(body.get("store", True)), "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": body.get("tool_choice", "auto"),
        "tools": _tools(script), "top_logprobs": 0, "top_p": 0.98, "truncation": "disabled", "usage": usage,
        "user": None, "metadata": {},
    }


def _usage(script: Script) -> dict[str, Any]:
    details = {"reasoning_tokens": script.reasoning_tokens}
    return {"input_tokens": script.input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": script.output_tokens, "output_tokens_details": details,
            "total_tokens": script.input_tokens + script.output_tokens}


Inner = tuple[str, dict[str, Any], "int | list[str]"]
"""An event inside an output item: (type, fields, tokens), or (type, fields without ``delta``, the tokens)."""


class _Writer:
    """Numbers the events and collects the output items. Keys follow ``type`` in alphabetical
    order, ``sequence_number`` included, as every recorded event shows."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.pieces: list[Piece] = []
        self.count = 0  # events written: the next sequence_number
        self.output: list[dict[str, Any]] = []

    def deltas(self, kind: str, fields: dict[str, Any], tokens: list[str]) -> None:
        """One ``kind`` event per token (``delta``), the rest of ``fields`` the same: one JSON template."""
        padded = "obfuscation" in fields
        slots = {"delta": slot("t"), "obfuscation": slot("o")} if padded else {"delta": slot("t")}
        template = Template(self._body(kind, {**fields, **slots}, slot("n")))
        count, first = len(tokens), self.count
        if not count:
            return
        paddings = self.script.paddings(count, 10, 15) if padded else ""
        numbers = list(range(first, first + count))
        self.pieces += run(kind, template, count, t=tokens, o=paddings, n=numbers)
        self.count += count

    def emit(self, kind: str, fields: dict[str, Any], tokens: int = 0) -> None:
        padding = self.script.padding(10, 15) if "obfuscation" in fields else ""
        if padding:
            fields = {**fields, "obfuscation": padding}
        self.pieces.append(Piece(kind, dumps(self._body(kind, fields, self.count)), tokens))
        self.count += 1

    @staticmethod
    def _body(kind: str, fields: dict[str, Any], number: int | str) -> dict[str, Any]:
        fields = {**fields, "sequence_number": number}
        return {"type": kind, **{k: fields[k] for k in sorted(fields)}}

    def item(self, added: dict[str, Any], done: dict[str, Any], inner: list[Inner]) -> None:
        """The item's ``added`` event, the ``inner`` events (a list of tokens: one delta event each), ``done``."""
        index = len(self.output)
        self.emit("response.output_item.added", {"item": added, "output_index": index})
        for kind, fields, tokens in inner:
            if isinstance(tokens, list):
                self.deltas(kind, fields, tokens)
            else:
                self.emit(kind, fields, tokens)
        self.emit("response.output_item.done", {"item": done, "output_index": index})
        self.output.append(done)


def _text_events(script: Script, kind: str, item_id: str, index: int, text: str) -> list[Inner]:
    """Delta events then the done event of one text, in the recorded key order."""
    if kind == "refusal":
        return [("response.refusal.delta", {"content_index": 0, "item_id": item_id, "output_index": index},
                 script.tokens(text)),
                ("response.refusal.done", {"content_index": 0, "item_id": item_id, "output_index": index,
                                           "refusal": text}, 0)]
    return [("response.output_text.delta", {"content_index": 0, "item_id": item_id, "logprobs": [],
                                            "obfuscation": "", "output_index": index}, script.tokens(text)),
            ("response.output_text.done", {"content_index": 0, "item_id": item_id, "logprobs": [],
                                           "output_index": index, "text": text}, 0)]


def _write(script: Script, w: _Writer) -> None:
    reply = script.reply
    if reply.reasoning:
        rid = _item_id(script, "rs")
        index = len(w.output)
        summary = {"type": "summary_text", "text": reply.reasoning}
        inner: list[Inner] = [("response.reasoning_summary_part.added", {"item_id": rid, "output_index": index,
                               "part": {"type": "summary_text", "text": ""}, "summary_index": 0}, 0)]
        inner.append(("response.reasoning_summary_text.delta", {"item_id": rid, "obfuscation": "",
                      "output_index": index, "summary_index": 0}, script.tokens(reply.reasoning)))
        inner += [("response.reasoning_summary_text.done", {"item_id": rid, "output_index": index,
                   "summary_index": 0, "text": reply.reasoning}, 0),
                  ("response.reasoning_summary_part.done", {"item_id": rid, "output_index": index,
                   "part": summary, "summary_index": 0}, 0)]
        w.item({"id": rid, "type": "reasoning", "summary": []}, {"id": rid, "type": "reasoning", "summary": [summary]},
               inner)
    if reply.text is not None or reply.refusal is not None or not script.calls:
        mid = _item_id(script, "msg")
        index = len(w.output)
        kind = "refusal" if reply.refusal is not None else "output_text"
        content = reply.refusal if reply.refusal is not None else (reply.text or "")
        empty = {"type": "refusal", "refusal": ""} if kind == "refusal" else \
            {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        part = {**empty, kind.replace("output_", ""): content}
        inner = [("response.content_part.added", {"content_index": 0, "item_id": mid, "output_index": index,
                                                  "part": empty}, 0)]
        inner += _text_events(script, kind, mid, index, content)
        inner.append(("response.content_part.done", {"content_index": 0, "item_id": mid, "output_index": index,
                                                      "part": part}, 0))
        message = {"id": mid, "type": "message", "status": "in_progress", "content": [], "phase": "final_answer",
                   "role": "assistant"}
        w.item(message, {**message, "status": "completed", "content": [part]}, inner)
    for ident, call in script.calls:
        fid = _item_id(script, "fc")
        index = len(w.output)
        args = call.arguments_json
        added = {"id": fid, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": ident,
                 "name": call.name}
        inner = [("response.function_call_arguments.delta", {"item_id": fid, "obfuscation": "",
                  "output_index": index}, script.tokens(args))]
        inner.append(("response.function_call_arguments.done", {"arguments": args, "item_id": fid,
                                                                "output_index": index}, 0))
        w.item(added, {**added, "status": "completed", "arguments": args}, inner)


def _synth_events(script: Script) -> list[Piece]:
    w = _Writer(script)
    for kind in ("response.created", "response.in_progress"):
        w.emit(kind, {"response": _response(script, "in_progress", [], None)})
    _write(script, w)
    final = _final(script, w.output)
    w.emit("response.incomplete" if final["status"] == "incomplete" else "response.completed", {"response": final})
    return w.pieces


def _final(script: Script, output: list[dict[str, Any]]) -> dict[str, Any]:
    status = "incomplete" if script.reply.finish == "length" else "completed"
    return _response(script, status, output, _usage(script))


def _synth_answer(script: Script) -> dict[str, Any]:
    w = _Writer(script)
    _write(script, w)
    return _final(script, w.output)


def _synth_headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    kind = "text/event-stream; charset=utf-8" if stream else "application/json"
    return [
        ("alt-svc", 'h3=":443"; ma=86400'), ("cf-cache-status", "DYNAMIC"),
        ("cf-ray", script.ident(HEX, 16) + "-SJC"), ("content-type", kind),
        ("date", email.utils.formatdate(script.created, usegmt=True)),
        ("openai-processing-ms", str(script.rng.randint(150, 600))), ("openai-version", "2020-10-01"),
        ("server", "cloudflare"), ("strict-transport-security", "max-age=31536000; includeSubDomains; preload"),
        ("x-content-type-options", "nosniff"), ("x-ratelimit-limit-requests", "15000"),
        ("x-ratelimit-limit-tokens", "40000000"), ("x-ratelimit-remaining-requests", "14999"),
        ("x-ratelimit-remaining-tokens", "39999000"), ("x-ratelimit-reset-requests", "4ms"),
        ("x-ratelimit-reset-tokens", "0s"), ("x-request-id", "req_" + script.ident(HEX, 32)),
    ]


def _text_event(events: list[tuple[str, Any]], spot: int, text: str) -> tuple[str | None, str]:
    """A ``response.output_text.delta``: the nearest one copied (item, indexes, ``sequence_number``,
    ``obfuscation``) with ``delta`` set to ``text``."""
    near = nearest(events, spot, lambda kind, v: v.get("type") == "response.output_text.delta")
    return "response.output_text.delta", dumps({**near, "delta": text})


SYNTHESIS = Synthesis(_synth_events, _synth_answer, _synth_headers, _synth_call_id, text_event=_text_event)
PROVIDER = replace(PROVIDER, synthesize=SYNTHESIS)
