// testdata/sdkagent is an ACP agent (stdio) built with the official ACP
// TypeScript SDK's own agent app (@agentclientprotocol/sdk, its unstable
// v1 entrypoint), the reference for what the SDK implements: every
// message nvim-acp sends it is parsed with the SDK's generated schemas
// before a handler runs (a malformed one is an error back), and it reaches
// the editor's MCP server with the SDK's own MCP-over-ACP caller
// (McpOverAcpCaller: mcp/message {serverId, requestId}, MCP 2026-07-28).
//
//   node agent.mjs --sdk DIR
//
// DIR holds node_modules/@agentclientprotocol/sdk (scripts/install-tools
// puts it in ~/.cache/nvim-acp/tools/acp-sdk). Each prompt's text is a
// path: the agent sends a notice (as a notice when the client advertises
// session.notices, else as chat text, as claude-agent-acp does), reads the
// path with the MCP server's read_file tool over MCP-over-ACP, says what it
// read, and ends the turn with its usage.
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const i = args.indexOf("--sdk");
const sdk = i >= 0 ? args[i + 1] : process.env.ACP_SDK_DIR;
if (!sdk) {
  console.error("usage: agent.mjs --sdk DIR");
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(sdk, "node_modules", p)).href);
const acp = await load("@agentclientprotocol/sdk/dist/v1/unstable/acp.js");
const { agent, methods, ndJsonStream, McpOverAcpCaller } = acp;

const caller = new McpOverAcpCaller({ clientInfo: { name: "sdkagent", version: "0" } });
let notices = false; // the client advertised session.notices
const servers = new Map(); // sessionId -> the serverId of its MCP-over-ACP server

const update = (ctx, sessionId, u) => ctx.client.notify(methods.client.session.update, { sessionId, update: u });
const say = (ctx, sessionId, text) =>
  update(ctx, sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

const app = agent()
  .onRequest(methods.agent.initialize, (ctx) => {
    notices = ctx.params.clientCapabilities?.session?.notices != null;
    return {
      protocolVersion: 1,
      agentCapabilities: { mcpCapabilities: { acp: true } },
      agentInfo: { name: "sdkagent", version: "0" },
      authMethods: [],
    };
  })
  .onRequest(methods.agent.session.new, (ctx) => {
    const sessionId = `sdk-session-${servers.size + 1}`;
    const acpServer = (ctx.params.mcpServers ?? []).find((s) => s.type === "acp");
    servers.set(sessionId, acpServer?.serverId);
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, async (ctx) => {
    const { sessionId, prompt } = ctx.params;
    const path = prompt
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("")
      .trim();
    if (notices) {
      await update(ctx, sessionId, {
        sessionUpdate: "notice",
        severity: "warning",
        title: "Reference notice",
        description: "sent as a notice",
      });
    } else {
      await say(ctx, sessionId, "Reference notice: sent as chat text\n\n");
    }
    const serverId = servers.get(sessionId);
    if (!serverId) {
      await say(ctx, sessionId, "no MCP-over-ACP server was given");
    } else {
      const out = await caller.request(ctx.client, serverId, "tools/call", {
        name: "read_file",
        arguments: { path },
      });
      const text =
        "result" in out
          ? (out.result?.content ?? []).map((c) => c.text ?? "").join("")
          : `inner error ${out.error.code}: ${out.error.message}`;
      await say(ctx, sessionId, `read over mcp/message: ${JSON.stringify(text)}`);
    }
    return { stopReason: "end_turn", usage: { totalTokens: 4321, inputTokens: 4000, outputTokens: 321 } };
  })
  .onNotification(methods.agent.session.cancel, () => {})
  .onNotification(methods.agent.mcp.message, caller.handleNotification);

const conn = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await conn.closed;
