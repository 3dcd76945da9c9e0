"""check-client adapter: anthropic-sdk-python, an SDK-level client (Messages, streamed).

    ssemock check-client --cassette anthropic-messages-tool-use-gzip --client-timeout 2 \
        -- python examples/check-client/anthropic_messages_answer.py --timeout 2

The SDK reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (set by check-client). Streams with the SDK's
``messages.stream`` helper and prints the message it assembled (``get_final_message``), as one JSON
object: text (the text blocks joined), tool calls (id, name, arguments: the parsed ``input``), finish
reason (``stop_reason``), usage. Exits 1 when the SDK raises; it adds no judgement of its own, so what
is graded is the SDK's.
"""

import argparse
import json
import sys

import anthropic


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="the SDK's timeout, seconds")
    args = parser.parse_args()
    client = anthropic.Anthropic(timeout=args.timeout, max_retries=2)
    try:
        with client.messages.stream(
            model="claude-sonnet-4-0",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Hello"}],
        ) as stream:
            message = stream.get_final_message()
    except anthropic.AnthropicError as exc:
        print(f"anthropic: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    answer = {
        "text": "".join(block.text for block in message.content if block.type == "text"),
        "tool_calls": [
            {"id": block.id, "name": block.name, "arguments": block.input}
            for block in message.content
            if block.type == "tool_use"
        ],
        "finish_reason": message.stop_reason,
        "usage": message.usage.model_dump(),
    }
    print(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
