// openai-model-mode.mjs drives the Automate server's model mode (model
// "<product>-model": a plain, stateless chat completion) with the official
// `openai` npm client, as a caller that owns its agent loop does:
//   1. a non-streaming tool loop (system prompt, whole history each call),
//   2. a streaming tool loop through the SDK's own stream helper, which
//      reassembles the tool-call deltas,
//   3. a streamed call aborted by the caller while the upstream still holds
//      its answer: the slot must be free again (polled on /health; the time
//      from the abort is reported as freedMs, not judged here: the figure's
//      target lives in BenchmarkModelModeAbortFreesSlot), and a new call
//      ("after the abort") then succeeds,
//   4. a model call while a native run holds the slot: 409 after one
//      request, then the run is cancelled.
//
// Used by automate/llm/modelmode_test.go, which scripts the upstream's
// replies in this order. Configuration comes from the environment only:
//   OPENAI_BASE_URL  http://127.0.0.1:<port>/v1
//   OPENAI_API_KEY   the server's bearer key
//   MODEL_ID         the model-mode id, e.g. service-model
//
// It prints one JSON summary on stdout and exits 1 when a check failed
// (the summary's "errors" lists them), 2 on an unexpected exception.
import OpenAI from "openai";

const baseURL = process.env.OPENAI_BASE_URL;
const apiKey = process.env.OPENAI_API_KEY;
const model = process.env.MODEL_ID;
if (!baseURL || !apiKey || !model) {
  console.error("OPENAI_BASE_URL, OPENAI_API_KEY and MODEL_ID must be set");
  process.exit(2);
}
const root = baseURL.replace(/\/v1\/?$/, "");
const auth = { authorization: `Bearer ${apiKey}` };

const errors = [];
function check(cond, what) {
  if (!cond) errors.push(what);
  return cond;
}

function newClient() {
  const wire = { requests: 0 };
  const client = new OpenAI({
    baseURL,
    apiKey,
    maxRetries: 0,
    timeout: 120_000,
    fetch: async (url, init) => {
      wire.requests++;
      return fetch(url, init);
    },
  });
  return { client, wire };
}

const SYSTEM = "You are the support agent of a shop. Call lookup_order before you answer.";
const tools = [
  {
    type: "function",
    function: {
      name: "lookup_order",
      description: "Status of an order",
      parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    },
  },
];

function execute(call) {
  check(call.type === "function", `tool call type ${call.type}`);
  const args = JSON.parse(call.function.arguments);
  check(call.function.name === "lookup_order", `unexpected tool ${call.function.name}`);
  return `order ${args.id}: held, SW-200 backordered`;
}

// One loop: call the model until it stops calling tools. sent keeps the
// messages of every call as this caller sent them.
async function loop(stream) {
  const { client, wire } = newClient();
  const messages = [
    { role: "system", content: SYSTEM },
    { role: "user", content: "Why hasn't order 4471 arrived?" },
  ];
  const sent = [];
  const calls = [];
  let final;
  for (let i = 0; i < 5; i++) {
    sent.push(JSON.parse(JSON.stringify(messages)));
    let completion;
    if (stream) {
      const s = client.chat.completions.stream({ model, messages, tools, stream_options: { include_usage: true } });
      completion = await s.finalChatCompletion();
    } else {
      completion = await client.chat.completions.create({ model, messages, tools });
    }
    check(completion.model === model, `model ${completion.model}`);
    const choice = completion.choices[0];
    if (choice.finish_reason !== "tool_calls") {
      final = { content: choice.message.content, finishReason: choice.finish_reason, usage: completion.usage ?? null };
      break;
    }
    calls.push(...choice.message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })));
    messages.push(choice.message);
    for (const call of choice.message.tool_calls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: execute(call) });
    }
  }
  check(final !== undefined, "the loop never ended");
  return { sent, calls, final, requests: wire.requests };
}

async function health() {
  const res = await fetch(`${root}/health`, { headers: auth });
  return res.json();
}

async function waitHealth(cond, limitMs) {
  const start = performance.now();
  for (;;) {
    const h = await health();
    if (cond(h)) return performance.now() - start;
    if (performance.now() - start > limitMs) return -1;
    await new Promise((r) => setTimeout(r, 2));
  }
}

// The caller aborts a streamed call the upstream is still thinking about.
async function abort() {
  const { client } = newClient();
  const controller = new AbortController();
  const pending = client.chat.completions
    .create({ model, messages: [{ role: "user", content: "take your time" }], stream: true }, { signal: controller.signal })
    .then(async (s) => {
      for await (const _ of s) {
        // nothing arrives before the abort
      }
    })
    .catch((err) => err);
  check((await waitHealth((h) => h.busy, 10_000)) >= 0, "the model call never held the slot");
  controller.abort();
  const freedMs = await waitHealth((h) => !h.busy, 30_000);
  check(freedMs >= 0, "the slot was not freed after the abort");
  const err = await pending;
  check(err instanceof Error, `the aborted call ended without an error: ${err}`);
  // The slot is usable again: a new call is answered.
  const after = await client.chat.completions.create({ model, messages: [{ role: "user", content: "after the abort" }] });
  return { freedMs, after: after.choices[0].message.content };
}

// A native run holds the slot: the model call gets a 409 after one request.
async function conflict() {
  const run = fetch(`${root}/v1/runs`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a long task" }),
  });
  check((await waitHealth((h) => h.busy, 10_000)) >= 0, "the run never held the slot");
  const { client, wire } = newClient();
  let status = 0;
  let type = "";
  try {
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] });
    errors.push("no 409 while a run holds the slot");
  } catch (err) {
    check(err instanceof OpenAI.APIError, `not an APIError: ${err}`);
    status = err.status;
    type = err.error?.type ?? "";
  }
  const requests = wire.requests;
  await fetch(`${root}/v1/automate/cancel`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ force: true }),
  });
  const runStatus = (await run).status;
  return { status, type, requests, runStatus };
}

try {
  const summary = {
    whole: await loop(false),
    stream: await loop(true),
    abort: await abort(),
    conflict: await conflict(),
  };
  summary.errors = errors;
  console.log(JSON.stringify(summary));
  process.exit(errors.length ? 1 : 0);
} catch (err) {
  console.log(JSON.stringify({ errors: [...errors, `exception: ${err?.stack ?? err}`] }));
  process.exit(2);
}
