// signalr_client.cjs: the official @microsoft/signalr client as a device,
// driven by hub's benchmark over stdin/stdout (one command per line).
//
// Environment: SIGNALR_MODULE (absolute path of the package's CommonJS
// entry), HUB_URL ({api_url}/device), HUB_TOKEN (device token).
//
// It connects over WebSockets with the token as bearer and X-Device-Token,
// calls VerifySelf, prints "ready <device id>", then obeys:
//   latency N  for each of the next N DeviceCommand events prints
//              "ack <index> <latency ns>", the latency being
//              CLOCK_MONOTONIC now minus the push time carried in the
//              command ("<index>:<push time ns>")
//   burst N    counts the next N events and prints
//              "done <count> <out of order> <monotonic ns of the last>"
//   quit       stops the connection and exits
'use strict';
const signalr = require(process.env.SIGNALR_MODULE);
const readline = require('readline');

const token = process.env.HUB_TOKEN;
const conn = new signalr.HubConnectionBuilder()
  .withUrl(process.env.HUB_URL, {
    transport: signalr.HttpTransportType.WebSockets,
    accessTokenFactory: () => token,
    headers: { 'X-Device-Token': token },
  })
  .configureLogging(signalr.LogLevel.Warning)
  .build();

let mode = 'idle';
let want = 0;
let count = 0;
let next = 0;
let outOfOrder = 0;
const out = (line) => process.stdout.write(line + '\n');

conn.on('DeviceCommand', (command) => {
  const now = process.hrtime.bigint();
  const colon = command.indexOf(':');
  const index = Number(command.slice(0, colon));
  if (mode === 'latency') {
    out(`ack ${index} ${now - BigInt(command.slice(colon + 1))}`);
    if (++count === want) mode = 'idle';
  } else if (mode === 'burst') {
    if (index !== next) outOfOrder++;
    next = index + 1;
    if (++count === want) {
      mode = 'idle';
      out(`done ${count} ${outOfOrder} ${now}`);
    }
  }
});

async function main() {
  await conn.start();
  const device = await conn.invoke('VerifySelf');
  out(`ready ${device.id}`);
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'latency' || cmd === 'burst') {
      mode = cmd;
      want = Number(arg);
      count = 0;
      next = 0;
      outOfOrder = 0;
      out(`armed ${cmd}`);
    } else if (cmd === 'quit') {
      break;
    }
  }
  await conn.stop();
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`signalr_client: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
