"""check-client adapter: openai-python, an SDK-level client (Chat Completions, streamed).

    ssemock check-client --cassette openai-chat-finish-length-usage --client-timeout 2 \
        -- python examples/check-client/openai_chat_answer.py --timeout 2

The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY (set by check-client). Prints the answer the SDK
assembled, as one JSON object: text, tool calls (id, name, arguments), finish reason, usage. Exits 1
when the SDK raises; it adds no judgement of its own, so what is graded is the SDK's.
"""

import argparse
import json
import sys

import openai


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="the SDK's timeout, seconds")
    args = parser.parse_args()
    client = openai.OpenAI(timeout=args.timeout, max_retries=2)
    text, calls, finish, usage = [], {}, None, None
    try:
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Hello"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage.model_dump()
            for choice in chunk.choices:
                text.append(choice.delta.content or "")
                finish = choice.finish_reason or finish
                for call in choice.delta.tool_calls or ():
                    entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                    entry["id"] = call.id or entry["id"]
                    if call.function is not None:
                        entry["name"] += call.function.name or ""
                        entry["arguments"] += call.function.arguments or ""
    except openai.OpenAIError as exc:
        print(f"openai: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    answer = {
        "text": "".join(text),
        "tool_calls": [calls[i] for i in sorted(calls)],
        "finish_reason": finish,
        "usage": usage,
    }
    print(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
