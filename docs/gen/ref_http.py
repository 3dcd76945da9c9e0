"""reference/http-api.md: the routes of the replay server's application (:func:`ssemock.server.create_app`),
each with its methods and its handler's docstring, read from the router (a route added to the app appears)."""

from __future__ import annotations

from ref_text import docstring, markdown

import ssemock.server
from ssemock.server import ServerState, create_app


def routes() -> list[tuple[list[str], list[str], object]]:
    """Each (paths, methods, handler) of the replay server's router, in the order routed: the routes of one
    handler and one set of methods together; methods ``*``: any."""
    by_route: dict[tuple[str, int], list[str]] = {}
    handlers: dict[int, object] = {}
    for route in create_app(ServerState()).router.routes():
        resource = route.resource
        info = resource.get_info() if resource is not None else {}
        path = str(info.get("path") or info.get("formatter") or (resource.canonical if resource else "?"))
        methods = by_route.setdefault((path, id(route.handler)), [])
        handlers[id(route.handler)] = route.handler
        if route.method not in methods and route.method != "HEAD":
            methods.append(route.method)
    grouped: dict[tuple[int, tuple[str, ...]], list[str]] = {}
    for (path, handler), methods in by_route.items():
        grouped.setdefault((handler, tuple(methods)), []).append(path)
    return [(paths, list(methods), handlers[handler]) for (handler, methods), paths in grouped.items()]


def page() -> str:
    """The whole page, as Markdown."""
    lines = [
        "# HTTP API",
        "",
        "Generated from the replay server's router (`ssemock.server.create_app`) and the docstrings of its handlers.",
        "",
        markdown(_contract()),
        "",
        "| methods | path | what it answers |",
        "| --- | --- | --- |",
    ]
    listed = []
    for paths, methods, handler in routes():
        path = paths[0]
        shown_paths = ", ".join(f"`{p}`" for p in paths)
        shown = "any" if methods == ["*"] else ", ".join(m.replace("*", "any other") for m in methods)
        text = docstring(handler)
        summary = " ".join(text.split("\n\n")[0].split()) if text else ""
        anchor = _anchor(path, methods)
        lines.append(f"| {shown} | [{shown_paths}](#{anchor}) | {markdown(summary).strip()} |")
        listed.append((anchor, shown, shown_paths, text))
    lines.append("")
    for anchor, shown, path, text in listed:
        lines += [f"## {shown} {path} {{#{anchor}}}", "", markdown(text) if text else "", ""]
    return "\n".join(lines) + "\n"


def _contract() -> str:
    """The HTTP contract the server module's docstring states (its list of rules)."""
    text = docstring(ssemock.server)
    return text[text.index("\n* ") + 1 :].split("\n\n")[0]


def _anchor(path: str, methods: list[str]) -> str:
    words = "-".join(m.lower().replace("*", "any") for m in methods) + path.replace("/", "-")
    return "".join(c if c.isalnum() or c == "-" else "" for c in words).strip("-").replace("--", "-")
