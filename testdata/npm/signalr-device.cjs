// signalr-device.cjs plays a device against the mock hub with the official
// @microsoft/signalr client, for hub/mockhub's Go tests. It reads its
// settings from the environment (tokens never go through argv):
//   HUB_URL       the hub address, e.g. http://127.0.0.1:4000/device
//   DEVICE_TOKEN  the device token
//   TRANSPORT     WebSockets (default) or ServerSentEvents
//   AUTH          both (default), bearer (accessTokenFactory only) or
//                 header (X-Device-Token only)
//   SERVER_TIMEOUT_MS  the client's server timeout (default 30000)
//   MODE          session (default): connect, VerifySelf,
//                 DeviceStartedListening, wait for one DeviceCommand, stop;
//                 reject: expect the connection to be refused;
//                 reconnect: like session, but after the first command wait
//                 for the hub to drop the connection, reconnect (the client's
//                 automatic reconnect), VerifySelf again, wait for a second
//                 command, stop.
// It prints one JSON object per line on stdout: connected, verified,
// listening, command, stopped; or rejected; closed when the hub drops it
// (exit 3). Exit 0 on the expected outcome.
"use strict";
const signalR = require("@microsoft/signalr");

const url = process.env.HUB_URL;
const token = process.env.DEVICE_TOKEN || "";
const transport = signalR.HttpTransportType[process.env.TRANSPORT || "WebSockets"];
const auth = process.env.AUTH || "both";
const mode = process.env.MODE || "session";

function out(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function fail(msg) {
  out({ event: "error", error: String(msg) });
  process.exit(1);
}

if (!url || transport === undefined) fail("HUB_URL and a valid TRANSPORT are required");

const options = { transport };
if (auth === "both" || auth === "bearer") options.accessTokenFactory = () => token;
if (auth === "both" || auth === "header") options.headers = { "X-Device-Token": token };

const builder = new signalR.HubConnectionBuilder()
  .withUrl(url, options)
  .configureLogging(signalR.LogLevel.Warning);
if (mode === "reconnect") builder.withAutomaticReconnect([0, 100, 250, 500, 1000, 2000, 2000, 2000, 2000, 2000]);
const connection = builder.build();
if (process.env.SERVER_TIMEOUT_MS) connection.serverTimeoutInMilliseconds = Number(process.env.SERVER_TIMEOUT_MS);

const timer = setTimeout(() => fail("timed out"), 60000);

// A connection that closes before the script stops it is reported and
// ends the script with exit code 3.
let stopping = false;
connection.onclose((err) => {
  if (stopping) return;
  out({ event: "closed", error: String(err && err.message) });
  process.exit(3);
});

async function session() {
  const gotCommand = new Promise((resolve) => {
    connection.on("DeviceCommand", (command, macro) => resolve({ command, macro }));
  });
  connection.on("StartListening", () => out({ event: "start-listening" }));
  await connection.start();
  out({ event: "connected", connectionId: connection.connectionId });
  const device = await connection.invoke("VerifySelf");
  out({ event: "verified", device });
  await connection.invoke("DeviceStartedListening");
  out({ event: "listening" });
  const cmd = await gotCommand;
  out({ event: "command", command: cmd.command, macro: cmd.macro });
  const latest = await connection.invoke("GetLatestDevice");
  stopping = true;
  await connection.stop();
  out({ event: "stopped", device: latest });
}

async function reconnect() {
  const commands = [];
  let waiting = null;
  connection.on("DeviceCommand", (command, macro) => {
    commands.push({ command, macro });
    if (waiting) waiting();
  });
  const nextCommand = () =>
    new Promise((resolve) => {
      if (commands.length > 0) return resolve(commands.shift());
      waiting = () => {
        waiting = null;
        resolve(commands.shift());
      };
    });
  const reconnected = new Promise((resolve) => {
    connection.onreconnecting((err) => out({ event: "reconnecting", error: String(err && err.message) }));
    connection.onreconnected((id) => resolve(id));
  });
  await connection.start();
  out({ event: "connected", connectionId: connection.connectionId });
  out({ event: "verified", device: await connection.invoke("VerifySelf") });
  await connection.invoke("DeviceStartedListening");
  out({ event: "listening" });
  const first = await nextCommand();
  out({ event: "command", command: first.command, macro: first.macro });
  const id = await reconnected;
  out({ event: "reconnected", connectionId: id });
  out({ event: "verified", device: await connection.invoke("VerifySelf") });
  const second = await nextCommand();
  out({ event: "command", command: second.command, macro: second.macro });
  stopping = true;
  await connection.stop();
  out({ event: "stopped" });
}

async function reject() {
  try {
    await connection.start();
  } catch (err) {
    out({ event: "rejected", error: String(err && err.message), statusCode: err && err.statusCode });
    return;
  }
  stopping = true;
  await connection.stop();
  fail("connected with a token that should be refused");
}

({ reject, reconnect, session }[mode] || session)()
  .then(() => {
    clearTimeout(timer);
    process.exit(0);
  })
  .catch((err) => fail(err && err.stack ? err.stack : err));
