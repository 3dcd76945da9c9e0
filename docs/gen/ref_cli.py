"""reference/cli.md: every sub-command of ``ssemock`` from its argparse parser (description, usage, options
with their defaults, examples), so the page says what ``--help`` says."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from ssemock.cli import build_parser
from ssemock.commands import COMMANDS, EXAMPLES


def page() -> str:
    """The whole page, as Markdown."""
    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "Generated from the `ssemock` argument parser: each section is what `ssemock COMMAND --help` says.",
        "",
    ]
    lines += ["```text", parser.format_usage().strip(), "```", "", parser.description or "", ""]
    lines += _examples(EXAMPLES)
    lines += ["| command | what it does |", "| --- | --- |"]
    lines += [f"| [`ssemock {name}`](#ssemock-{name}) | {entry.help} |" for name, entry in COMMANDS.items()]
    lines.append("")
    for name, sub in _subcommands(parser):
        lines += _command(f"ssemock {name}", sub, COMMANDS[name].examples, level=2)
    return "\n".join(lines) + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _command(title: str, parser: argparse.ArgumentParser, examples: tuple[str, ...], *, level: int) -> list[str]:
    lines = [f"{'#' * level} {title}", ""]
    if parser.description:
        lines += [" ".join(parser.description.split()), ""]
    lines += ["```text", parser.format_usage().removeprefix("usage: ").strip(), "```", ""]
    lines += _options(parser)
    lines += _examples(examples)
    for name, sub in _subcommands(parser):
        help_line = next((a.help for a in _choice_actions(parser) if a.dest == name), None)
        sub_lines = _command(f"{title} {name}", sub, (), level=level + 1)
        if help_line and not sub.description:
            sub_lines[2:2] = [help_line[0].upper() + help_line[1:] + ".", ""]
        lines += sub_lines
    return lines


def _choice_actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action._choices_actions


def _options(parser: argparse.ArgumentParser) -> list[str]:
    lines: list[str] = []
    for group in parser._action_groups:
        actions = [
            a for a in group._group_actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        ]
        if not actions:
            continue
        title = {"positional arguments": "Arguments", "options": "Options"}.get(group.title or "", group.title or "")
        lines += [f"**{title[0].upper() + title[1:]}**" + (f" ({group.description})" if group.description else ""), ""]
        lines += [_option(a) for a in actions]
        lines.append("")
    return lines


def _option(action: argparse.Action) -> str:
    if action.option_strings:
        metavar = "" if action.nargs == 0 else " " + (action.metavar or action.dest.upper())
        names = ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)
    else:
        names = f"`{action.metavar or action.dest}`" + (" …" if action.nargs in ("+", "*") else "")
    text = " ".join((action.help or "").split())
    if action.required and action.option_strings:
        text += " (required)"
    default = action.default
    if action.option_strings and default not in (None, False, [], argparse.SUPPRESS) and "default" not in text:
        text += f"; default: `{default}`"
    if isinstance(action.choices, (list, tuple)):
        text += "; one of " + ", ".join(f"`{c}`" for c in action.choices)
    return f"- {names}: {text}" if text else f"- {names}"


def _examples(examples: tuple[str, ...]) -> list[str]:
    if not examples:
        return []
    return ["Examples:", "", "```sh", *examples, "```", ""]
