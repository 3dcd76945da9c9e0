// check-client adapter: openai-node (the `openai` npm package), an SDK-level client (Chat Completions, streamed).
//
//   ssemock check-client --cassette openai-chat-tool-calls-usage --client-timeout 2 -- node examples/check-client/openai_node_chat_answer.mjs 2
//
// The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY (set by check-client). Prints the answer the SDK's stream
// assembled, as one JSON object: text, tool calls (id, name, arguments), finish reason, usage (the usage
// chunk, as sent). Exits 1 when the SDK throws (an HTTP error, an error event, a broken read, a timeout);
// it adds no judgement of its own, so what is graded is the SDK's. The first argument is the SDK's timeout,
// seconds (default 10); retries are the SDK's own (maxRetries 2). Node resolves the package beside the
// script: `npm install openai` there.
import OpenAI from "openai";

const timeout = Number(process.argv[2] ?? 10) * 1000;
const client = new OpenAI({ timeout, maxRetries: 2 });
const text = [];
const calls = new Map();
let finish = null;
let usage = null;
try {
  const stream = await client.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "Hello" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      text.push(choice.delta?.content ?? "");
      finish = choice.finish_reason ?? finish;
      for (const call of choice.delta?.tool_calls ?? []) {
        if (!calls.has(call.index)) calls.set(call.index, { id: null, name: "", arguments: "" });
        const entry = calls.get(call.index);
        entry.id = call.id ?? entry.id;
        entry.name += call.function?.name ?? "";
        entry.arguments += call.function?.arguments ?? "";
      }
    }
  }
} catch (error) {
  process.stderr.write(`openai: ${error?.constructor?.name ?? "Error"}: ${error?.message ?? error}\n`);
  process.exit(1);
}
const toolCalls = [...calls.keys()].sort((a, b) => a - b).map((index) => calls.get(index));
process.stdout.write(JSON.stringify({ text: text.join(""), tool_calls: toolCalls, finish_reason: finish, usage }) + "\n");
