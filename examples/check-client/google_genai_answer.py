"""check-client adapter: google-genai (Python), an SDK-level client (Gemini API, streamed).

    ssemock check-client --cassette gemini-streamgeneratecontent-crlf --client-timeout 2 \
        -- python examples/check-client/google_genai_answer.py --timeout 2

The SDK reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY (set by check-client). Gemini names the model
and the API version in the path (``/v1beta/models/MODEL:streamGenerateContent``), which is matched: both
are the recorded path's (SSEMOCK_STREAM_URL), the model unless ``--model`` names one. A recorded Vertex AI
path (``/v1/projects/P/locations/L/publishers/google/models/M:…``) makes a Vertex AI client for P and L,
with SSEMOCK_URL as its base URL and GEMINI_API_KEY as its OAuth token. Streams with
``models.generate_content_stream`` (3 attempts; the SDK retries only when given retry options) and prints
the answer assembled from the chunks, as one JSON object: text (the text parts joined, thoughts left
out), tool calls (id, name, arguments: the ``functionCall`` parts), finish reason (the last one sent),
usage (the last ``usageMetadata``, its set fields). Exits 1 when the SDK raises; it adds no judgement of
its own, so what is graded is the SDK's.
"""

import argparse
import json
import os
import re
import sys

from google import genai
from google.genai import errors, types
from google.oauth2.credentials import Credentials

RECORDED = re.compile(
    r"/(?P<version>v1[a-z0-9]*)/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/)?"
    r"models/(?P<model>[^/:?]+):"
)
"""A Gemini API or Vertex AI ``…:streamGenerateContent`` path: its API version, project, location, model."""


def client_for(path: dict[str, str | None], timeout: float) -> genai.Client:
    """A client for the recorded path's API version, on Vertex AI when it names a project."""
    options = types.HttpOptions(
        api_version=path["version"], timeout=int(timeout * 1000), retry_options=types.HttpRetryOptions(attempts=3)
    )
    if path["project"] is None:
        return genai.Client(http_options=options)
    options.base_url = os.environ["SSEMOCK_URL"]
    token = Credentials(token=os.environ["GEMINI_API_KEY"])  # a token without expiry: never refreshed
    return genai.Client(
        vertexai=True, project=path["project"], location=path["location"], credentials=token, http_options=options
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="the SDK's timeout, seconds")
    parser.add_argument("--model", default=None, help="the model (default: the recorded path's)")
    args = parser.parse_args()
    found = RECORDED.search(os.environ.get("SSEMOCK_STREAM_URL", ""))
    path = found.groupdict() if found else {"version": "v1beta", "project": None, "model": "gemini-2.0-flash"}
    client = client_for(path, args.timeout)
    text, calls, finish, usage = [], [], None, None
    try:
        for chunk in client.models.generate_content_stream(model=args.model or path["model"], contents="Hello"):
            if chunk.usage_metadata is not None:
                usage = chunk.usage_metadata.model_dump(mode="json", exclude_none=True)
            for candidate in chunk.candidates or ():
                finish = candidate.finish_reason or finish
                for part in (candidate.content.parts if candidate.content else None) or ():
                    if part.text is not None and not part.thought:
                        text.append(part.text)
                    if part.function_call is not None:
                        call = part.function_call
                        calls.append({"id": call.id, "name": call.name, "arguments": call.args})
    except errors.APIError as exc:
        print(f"google-genai: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    answer = {
        "text": "".join(text),
        "tool_calls": calls,
        "finish_reason": finish.value if finish is not None else None,
        "usage": usage,
    }
    print(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
