"""check-client adapter: openai-python 0.x (before 1.0), an SDK-level client (ChatCompletion, streamed).

    ssemock check-client --cassette openai-chat-finish-length-usage --client-timeout 2 \
        -- python examples/check-client/openai_v0_chat_answer.py --timeout 2

The 0.x SDK has module-level settings and reads ``OPENAI_API_BASE``, not ``OPENAI_BASE_URL``: the base
URL check-client sets (``OPENAI_BASE_URL``) and its key (``OPENAI_API_KEY``) are put into
``openai.api_base`` and ``openai.api_key``. Prints the answer the SDK assembled, as one JSON object:
text, tool calls (id, name, arguments), finish reason, usage. Exits 1 when the SDK raises; it adds no
judgement of its own, so what is graded is the SDK's.
"""

import argparse
import json
import os
import sys

import openai


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="the SDK's request timeout, seconds")
    args = parser.parse_args()
    openai.api_base = os.environ["OPENAI_BASE_URL"]
    openai.api_key = os.environ["OPENAI_API_KEY"]
    text, calls, finish, usage = [], {}, None, None
    try:
        stream = openai.ChatCompletion.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Hello"}],
            stream=True,
            stream_options={"include_usage": True},
            request_timeout=args.timeout,
        )
        for chunk in stream:
            if chunk.get("usage") is not None:
                usage = chunk["usage"].to_dict_recursive()
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                text.append(delta.get("content") or "")
                finish = choice.get("finish_reason") or finish
                for call in delta.get("tool_calls") or ():
                    entry = calls.setdefault(call["index"], {"id": None, "name": "", "arguments": ""})
                    entry["id"] = call.get("id") or entry["id"]
                    function = call.get("function") or {}
                    entry["name"] += function.get("name") or ""
                    entry["arguments"] += function.get("arguments") or ""
    except openai.error.OpenAIError as exc:
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
