// testdata/sdkserver serves a stdio ACP agent through the official ACP
// TypeScript SDK's server transport (@agentclientprotocol/sdk's AcpServer:
// Streamable HTTP and WebSocket at /acp), the reference implementation of
// ACP's network transports, so that nvim-acp's client is tested against a
// server it did not write (e2e/remote_test.go). Each connection gets its
// own agent process, whose stdio the SDK's own NDJSON stream speaks.
//
//   node server.mjs --sdk DIR [--addr HOST:PORT] [--token T] -- AGENT [ARGS...]
//
// DIR holds node_modules/@agentclientprotocol/sdk and node_modules/ws
// (scripts/install-tools puts them in ~/.cache/nvim-acp/tools/acp-sdk).
// With --token, every request must carry "Authorization: Bearer T" (401
// otherwise). It prints "listening on HOST:PORT" when it is ready.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const sep = args.indexOf("--");
const agent = sep >= 0 ? args.slice(sep + 1) : [];
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 && (sep < 0 || i < sep) ? args[i + 1] : def;
};
const sdk = opt("--sdk", process.env.ACP_SDK_DIR);
const [host, port] = opt("--addr", "127.0.0.1:0").split(":");
const token = opt("--token", "");
if (!sdk || agent.length === 0) {
  console.error("usage: server.mjs --sdk DIR [--addr HOST:PORT] [--token T] -- AGENT [ARGS...]");
  process.exit(2);
}

// The SDK's modules by file: this script lives outside the SDK's tree.
const load = (p) => import(pathToFileURL(join(sdk, "node_modules", p)).href);
const { AcpServer } = await load("@agentclientprotocol/sdk/dist/transports/server.js");
const { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } = await load(
  "@agentclientprotocol/sdk/dist/transports/node-adapter.js",
);
const { ndJsonStream } = await load("@agentclientprotocol/sdk/dist/v1/stable/acp.js");
const { WebSocketServer } = await load("ws/wrapper.mjs");

// Each accepted connection: a new agent process, its stdio bridged to the
// connection's message stream both ways; the process ends with it.
const connector = {
  connect(stream) {
    const child = spawn(agent[0], agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    const proc = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
    const closed = Promise.allSettled([
      stream.readable.pipeTo(proc.writable),
      proc.readable.pipeTo(stream.writable),
    ]).then(() => {
      child.kill();
    });
    return { closed };
  },
};

const acp = new AcpServer({ agent: connector });
const handle = createNodeHttpHandler(acp);
const upgrade = createNodeWebSocketUpgradeHandler(acp, new WebSocketServer({ noServer: true }));
const allowed = (req) => !token || req.headers.authorization === `Bearer ${token}`;
const atACP = (req) => new URL(req.url, "http://localhost").pathname === "/acp";

const server = createServer((req, res) => {
  if (!atACP(req)) {
    res.writeHead(404).end("not found");
  } else if (!allowed(req)) {
    res.writeHead(401, { "WWW-Authenticate": "Bearer" }).end("unauthorized");
  } else {
    handle(req, res);
  }
});
server.on("upgrade", (req, socket, head) => {
  if (!atACP(req) || !allowed(req)) {
    socket.end(`HTTP/1.1 ${atACP(req) ? "401 Unauthorized" : "404 Not Found"}\r\nConnection: close\r\n\r\n`);
    return;
  }
  upgrade(req, socket, head);
});
server.listen(Number(port), host, () => {
  const a = server.address();
  console.log(`listening on ${a.address}:${a.port}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    void acp.close().finally(() => process.exit(0));
  });
}
