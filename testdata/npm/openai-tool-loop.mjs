// openai-tool-loop.mjs drives the Automate server's POST /v1/chat/completions
// with the official `openai` npm client through a full caller-executed tool
// loop (a single call, then two parallel calls), then checks that a 409 and
// a failed run (500) surface as errors after exactly one request.
//
// Used by automate/server/openai_npm_test.go. Configuration comes from the
// environment only (the key is a secret and never goes on a command line):
//   OPENAI_BASE_URL  http://127.0.0.1:<port>/v1
//   OPENAI_API_KEY   the server's bearer key
//
// It prints one JSON summary on stdout and exits 1 when any check failed
// (the summary's "errors" lists them), 2 on an unexpected exception.
import OpenAI from "openai";

const baseURL = process.env.OPENAI_BASE_URL;
const apiKey = process.env.OPENAI_API_KEY;
if (!baseURL || !apiKey) {
  console.error("OPENAI_BASE_URL and OPENAI_API_KEY must be set");
  process.exit(2);
}

const errors = [];
function check(cond, what) {
  if (!cond) errors.push(what);
  return cond;
}

// A client whose fetch counts the requests on the wire and keeps the last
// response body (an API error does not expose a chat-shaped body).
function newClient(opts = {}) {
  const wire = { requests: 0, lastStatus: 0, lastBody: "" };
  const client = new OpenAI({
    baseURL,
    apiKey,
    maxRetries: 0,
    timeout: 120_000,
    ...opts,
    fetch: async (url, init) => {
      wire.requests++;
      const res = await fetch(url, init);
      wire.lastStatus = res.status;
      wire.lastBody = await res.clone().text();
      return res;
    },
  });
  return { client, wire };
}

const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
  {
    type: "function",
    function: {
      name: "get_time",
      description: "Current time in a time zone",
      parameters: { type: "object", properties: { tz: { type: "string" } } },
    },
  },
];

// The caller's side of the loop: results are derived from the arguments the
// server sent, so the Go test can find them in the run's steps.
function execute(call) {
  check(call.type === "function", `tool call type ${call.type}`);
  const args = JSON.parse(call.function.arguments);
  switch (call.function.name) {
    case "get_weather":
      return `${args.city}: 18C, light wind (node caller)`;
    case "get_time":
      return `09:30 in ${args.tz} (node caller)`;
    default:
      errors.push(`unexpected tool ${call.function.name}`);
      return "";
  }
}

async function toolLoop() {
  const { client, wire } = newClient();
  const messages = [
    { role: "system", content: "Be concise." },
    {
      role: "user",
      content: [
        "Plan a walk in Oslo",
        '#!tool get_weather {"city":"Oslo"}',
        '#!tools [{"name":"get_weather","arguments":{"city":"Bergen"}},{"name":"get_time","arguments":{"tz":"Europe/Oslo"}}]',
        "#!answer Walk at 09:30, it is mild.",
      ].join("\n"),
    },
  ];
  const rounds = [];
  const results = [];
  let firstId = "";
  let completion;
  for (let i = 0; i < 10; i++) {
    completion = await client.chat.completions.create({ model: "service-agent", messages, tools });
    if (!firstId) firstId = completion.id;
    const choice = completion.choices[0];
    check(completion.choices.length === 1, `choices: ${completion.choices.length}`);
    if (choice.finish_reason !== "tool_calls") break;
    check(completion.service?.status === "awaiting_tool_results", `parked service.status ${completion.service?.status}`);
    rounds.push(choice.message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })));
    // The assistant message goes back exactly as the client returned it.
    messages.push(choice.message);
    for (const call of choice.message.tool_calls) {
      const result = execute(call);
      results.push(result);
      messages.push({ role: "tool", tool_call_id: call.id, content: result });
    }
  }
  const ids = rounds.flat().map((c) => c.id);
  check(rounds.length === 2, `rounds ${rounds.length}, want 2`);
  check(rounds[0]?.length === 1 && rounds[1]?.length === 2, `round sizes ${rounds.map((r) => r.length)}`);
  check(new Set(ids).size === ids.length && ids.every((id) => id), `tool call ids not unique: ${ids}`);
  check(completion.choices[0].finish_reason === "stop", `final finish_reason ${completion.choices[0].finish_reason}`);
  check(completion.choices[0].message.content === "Walk at 09:30, it is mild.", `final content ${completion.choices[0].message.content}`);
  check(completion.id === firstId, `final id ${completion.id} is not the run started as ${firstId}`);
  check(completion.service?.status === "completed", `final service.status ${completion.service?.status}`);
  const steps = completion.service?.steps ?? [];
  results.forEach((r, i) => check(steps[i]?.resultSummary?.includes(r), `step ${i + 1} resultSummary ${steps[i]?.resultSummary} lacks ${r}`));
  check(wire.requests === 3, `tool loop requests ${wire.requests}, want 3`);
  return {
    rounds,
    toolCallIds: ids,
    results,
    firstId,
    finalId: completion.id,
    finalContent: completion.choices[0].message.content,
    finishReason: completion.choices[0].finish_reason,
    serviceStatus: completion.service?.status,
    stepSummaries: steps.map((s) => s.resultSummary ?? ""),
    requests: wire.requests,
  };
}

async function expectError(opts, body) {
  const { client, wire } = newClient(opts);
  try {
    await client.chat.completions.create(body);
    errors.push(`no error for ${JSON.stringify(body.messages)}`);
    return { requests: wire.requests };
  } catch (err) {
    check(err instanceof OpenAI.APIError, `not an APIError: ${err}`);
    return { status: err.status, error: err.error ?? null, body: JSON.parse(wire.lastBody || "null"), requests: wire.requests };
  }
}

async function conflict() {
  // Park a run, then ask for another one.
  const { client } = newClient();
  const parked = await client.chat.completions.create({
    model: "service-agent",
    messages: [{ role: "user", content: 'hold the slot\n#!tool get_time {"tz":"UTC"}\n#!answer released' }],
    tools,
  });
  check(parked.choices[0].finish_reason === "tool_calls", `park: ${parked.choices[0].finish_reason}`);
  const fresh = { model: "service-agent", messages: [{ role: "user", content: "another task" }] };
  const noRetry = await expectError({}, fresh);
  // The npm default (2 retries) still sends one request: x-should-retry: false.
  const defaults = await expectError({ maxRetries: undefined }, fresh);
  for (const [name, r] of [["maxRetries 0", noRetry], ["default retries", defaults]]) {
    check(r.status === 409, `${name}: status ${r.status}`);
    check(r.error?.type === "conflict", `${name}: error type ${r.error?.type}`);
    check(r.requests === 1, `${name}: 409 requests ${r.requests}, want 1`);
  }
  // Release the slot by finishing the parked run.
  const call = parked.choices[0].message.tool_calls[0];
  const done = await client.chat.completions.create({
    model: "service-agent",
    messages: [parked.choices[0].message, { role: "tool", tool_call_id: call.id, content: execute(call) }],
    tools,
  });
  check(done.choices[0].message.content === "released", `release: ${done.choices[0].message.content}`);
  return {
    status: noRetry.status,
    type: noRetry.error?.type,
    message: noRetry.error?.message,
    requests: noRetry.requests,
    requestsWithDefaultRetries: defaults.requests,
  };
}

async function failedRun() {
  const r = await expectError(
    {},
    { model: "service-agent", messages: [{ role: "user", content: "Try it\n#!fail EXECUTION_FAILED" }] },
  );
  check(r.status === 500, `failed run status ${r.status}`);
  check(r.body?.object === "chat.completion", `failed run body object ${r.body?.object}`);
  check(r.body?.service?.errorCode === "EXECUTION_FAILED", `failed run errorCode ${r.body?.service?.errorCode}`);
  check(r.requests === 1, `failed run requests ${r.requests}, want 1`);
  return {
    status: r.status,
    serviceStatus: r.body?.service?.status,
    errorCode: r.body?.service?.errorCode,
    schemaVersion: r.body?.service?.schemaVersion,
    requests: r.requests,
  };
}

try {
  const summary = { loop: await toolLoop(), conflict: await conflict(), failed: await failedRun() };
  summary.errors = errors;
  console.log(JSON.stringify(summary));
  process.exit(errors.length ? 1 : 0);
} catch (err) {
  console.log(JSON.stringify({ errors: [...errors, `exception: ${err?.stack ?? err}`] }));
  process.exit(2);
}
