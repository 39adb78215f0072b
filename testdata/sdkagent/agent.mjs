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
//
// Flags add what the SDK's schemas have as unstable:
//   --system-prompt    advertise sessionCapabilities.systemPrompt; the first
//                      prompt's answer starts with the systemPrompt got
//   --override         ... with its mode.override
//   --auth-status      advertise auth.status: auth/status answers signed out,
//                      and the first prompt signs in (auth/status_update)
//   --providers        advertise providers: providers/list, set, disable over
//                      one provider "main" (its changes said in the next turn)
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

const flag = (f) => args.includes(f);
const systemPrompts = new Map(); // sessionId -> the systemPrompt of session/new
let signedIn = false;
const provider = {
  providerId: "main",
  supported: ["anthropic", "openai"],
  required: false,
  current: { apiType: "anthropic", baseUrl: "https://api.anthropic.com" },
};
const authStatus = () =>
  signedIn ? { state: "authenticated", accounts: [{ label: "Reference account", active: true }] } : { state: "unauthenticated" };

const caller = new McpOverAcpCaller({ clientInfo: { name: "sdkagent", version: "0" } });
let notices = false; // the client advertised session.notices
const servers = new Map(); // sessionId -> the serverId of its MCP-over-ACP server

const update = (ctx, sessionId, u) => ctx.client.notify(methods.client.session.update, { sessionId, update: u });
const say = (ctx, sessionId, text) =>
  update(ctx, sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

const app = agent()
  .onRequest(methods.agent.initialize, (ctx) => {
    notices = ctx.params.clientCapabilities?.session?.notices != null;
    const agentCapabilities = { mcpCapabilities: { acp: true } };
    if (flag("--system-prompt")) {
      agentCapabilities.sessionCapabilities = {
        systemPrompt: flag("--override") ? { mode: { override: {} } } : {},
      };
    }
    if (flag("--auth-status")) agentCapabilities.auth = { status: {} };
    if (flag("--providers")) agentCapabilities.providers = {};
    return {
      protocolVersion: 1,
      agentCapabilities,
      agentInfo: { name: "sdkagent", version: "0" },
      authMethods: [],
    };
  })
  .onRequest(methods.agent.session.new, (ctx) => {
    const sessionId = `sdk-session-${servers.size + 1}`;
    const acpServer = (ctx.params.mcpServers ?? []).find((s) => s.type === "acp");
    servers.set(sessionId, acpServer?.serverId);
    if (ctx.params.systemPrompt) systemPrompts.set(sessionId, ctx.params.systemPrompt);
    return { sessionId };
  })
  .onRequest(methods.agent.auth.status, () => authStatus())
  .onRequest(methods.agent.providers.list, () => ({ providers: [provider] }))
  .onRequest(methods.agent.providers.set, (ctx) => {
    const { providerId, apiType, baseUrl, headers } = ctx.params;
    if (providerId !== provider.providerId) throw new Error(`no provider ${providerId}`);
    provider.current = { apiType, baseUrl };
    provider.headers = Object.keys(headers ?? {}).sort().join(",");
    return {};
  })
  .onRequest(methods.agent.providers.disable, (ctx) => {
    if (ctx.params.providerId === provider.providerId) provider.current = null;
    return {};
  })
  .onRequest(methods.agent.session.prompt, async (ctx) => {
    const { sessionId, prompt } = ctx.params;
    const path = prompt
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("")
      .trim();
    const sp = systemPrompts.get(sessionId);
    if (sp) {
      systemPrompts.delete(sessionId);
      await say(ctx, sessionId, `systemPrompt ${sp.mode}: ${sp.content.map((c) => c.text).join("")}\n\n`);
    }
    if (flag("--providers")) {
      const c = provider.current;
      await say(ctx, sessionId, `provider main: ${c ? `${c.apiType} ${c.baseUrl} headers ${provider.headers ?? ""}` : "disabled"}\n\n`);
    }
    if (flag("--auth-status") && !signedIn) {
      signedIn = true;
      await ctx.client.notify(methods.client.auth.statusUpdate, authStatus());
    }
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

// --- ACP v2 (the SDK's experimental draft v2 agent app), behind the SDK's
// own protocol router: a client offering v2 gets the v2 agent, one
// offering 1 the v1 agent above (--v1-only: the v1 agent alone, behind
// the router, as an agent that has no v2 answers a v2 offer).
//
// v2's prompt is answered at once ({messageId}); the turn is reported by
// state_update (running, then idle with its stop reason). Prompts:
//   <path>   say the client's capabilities; read the path with the
//            editor's MCP server (read_file), say it
//   write <path> <text>   write it with the MCP server's write_file
//   run <command>         run it with the MCP server's run_command
//   term     a tool call showing an agent-owned terminal (terminal_update,
//            terminal_output_chunk) that outlives the turn as background
//            work, cancellable (terminal/cancel)
//   sub      a subagent (subagent_update) whose own session's v2 updates
//            come under its id
//   chunks N a tool call whose content comes in N tool_call_content_chunk
//            updates ("chunk 1".."chunk N")
//   snapshot an agent-owned terminal whose streamed output is then replaced
//            by a terminal_update output snapshot
//   later    after the turn, foreground work of the agent's own (running
//            with no prompt), then requires_action until session/cancel
//   tool     a tool call that runs until the client cancels it
//            (tool_call/cancel), its permission asked first (a command
//            subject)
const v2acp = await load("@agentclientprotocol/sdk/dist/v2/unstable/acp.js");
const v2 = v2acp.methods;
const v2caller = new v2acp.McpOverAcpCaller({ clientInfo: { name: "sdkagent", version: "0" } });
let v2client; // the connection's client context
const v2servers = new Map(); // sessionId -> serverId
const v2work = new Map(); // sessionId -> { background: Map, toolDone }
let seq = 0;
let v2caps; // the capabilities the client advertised
const b64 = (s) => Buffer.from(s, "utf8").toString("base64");
const up2 = (sessionId, u) => v2client.notify(v2.client.session.update, { sessionId, update: u });
const state = (sessionId, st, extra = {}) => {
  const w = v2work.get(sessionId);
  const background = [...w.background.values()];
  return up2(sessionId, { sessionUpdate: "state_update", state: st, background, ...extra });
};
const say2 = (sessionId, text) =>
  up2(sessionId, { sessionUpdate: "agent_message_chunk", messageId: "m-agent", content: { type: "text", text } });
const mcpText = (out) =>
  "result" in out
    ? (out.result?.content ?? []).map((c) => c.text ?? "").join("")
    : `inner error ${out.error.code}: ${out.error.message}`;

async function turn2(sessionId, text) {
  const w = v2work.get(sessionId);
  const serverId = v2servers.get(sessionId);
  if (text === "term") {
    const tc = `tc-${++seq}`;
    const term = `term-${seq}`;
    await up2(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId: tc,
      title: "Run a long command",
      kind: "execute",
      status: "in_progress",
      content: [{ type: "terminal", terminalId: term }],
    });
    await up2(sessionId, {
      sessionUpdate: "terminal_update",
      terminalId: term,
      command: "sleep 300",
      cwd: "/",
      capabilities: { cancel: {} },
    });
    await up2(sessionId, { sessionUpdate: "terminal_output_chunk", terminalId: term, data: b64("v2 terminal started\n") });
    w.background.set(term, { type: "terminal", terminalId: term });
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, status: "completed" });
    await say2(sessionId, "left it running in the background");
    return "end_turn";
  }
  const n = /^chunks (\d+)$/.exec(text);
  if (n) {
    const tc = `tc-${++seq}`;
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, title: "Stream content", status: "in_progress" });
    for (let k = 1; k <= Number(n[1]); k++) {
      await up2(sessionId, {
        sessionUpdate: "tool_call_content_chunk",
        toolCallId: tc,
        content: { type: "content", content: { type: "text", text: `chunk ${k}` } },
      });
    }
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, status: "completed" });
    return "end_turn";
  }
  if (text === "snapshot") {
    const tc = `tc-${++seq}`;
    const term = `term-${seq}`;
    await up2(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId: tc,
      title: "Run a redrawn command",
      kind: "execute",
      status: "in_progress",
      content: [{ type: "terminal", terminalId: term }],
    });
    await up2(sessionId, { sessionUpdate: "terminal_update", terminalId: term, command: "redraw", cwd: "/" });
    await up2(sessionId, { sessionUpdate: "terminal_output_chunk", terminalId: term, data: b64("streamed-old\n") });
    await up2(sessionId, {
      sessionUpdate: "terminal_update",
      terminalId: term,
      output: { data: b64("snapshot-new\n") },
      exitStatus: { exitCode: 0 },
    });
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, status: "completed" });
    return "end_turn";
  }
  if (text === "later") {
    // After this turn's idle: work of the agent's own.
    setTimeout(async () => {
      const done = new Promise((resolve) => (w.toolDone = resolve));
      await state(sessionId, "running");
      await say2(sessionId, "working on my own");
      await state(sessionId, "requires_action");
      await done;
      w.cancelled = false;
      w.toolDone = undefined;
      await state(sessionId, "idle", { stopReason: "cancelled" });
    }, 50);
    return "end_turn";
  }
  if (text === "sub") {
    const tc = `tc-${++seq}`;
    const child = `${sessionId}-child`;
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, title: "Task: a helper", status: "in_progress" });
    await up2(sessionId, {
      sessionUpdate: "subagent_update",
      sessionId: child,
      title: "Helper",
      state: { state: "running" },
      _meta: { toolCallId: tc },
    });
    await up2(child, { sessionUpdate: "tool_call_update", toolCallId: "child-tc", title: "Child reads", status: "completed" });
    await up2(child, { sessionUpdate: "agent_message", messageId: "cm", content: [{ type: "text", text: "child says hi" }] });
    await up2(sessionId, { sessionUpdate: "subagent_update", sessionId: child, state: { state: "idle", stopReason: "end_turn" } });
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, status: "completed" });
    return "end_turn";
  }
  if (text === "tool") {
    const tc = `tc-${++seq}`;
    const res = await v2client.request(v2.client.session.requestPermission, {
      sessionId,
      title: "Run the watcher",
      subject: { type: "command", command: "watch -n1 date", cwd: "/", toolCallId: tc },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    if (res.outcome.outcome !== "selected" || res.outcome.optionId !== "allow") {
      await say2(sessionId, "not allowed");
      return "end_turn";
    }
    const done = new Promise((resolve) => (w.toolDone = resolve));
    await up2(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId: tc,
      title: "Watch the date",
      kind: "execute",
      status: "in_progress",
      capabilities: { cancel: {} },
    });
    await up2(sessionId, {
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: tc,
      content: { type: "content", content: { type: "text", text: "watching" } },
    });
    w.tools = w.tools ?? new Map();
    w.tools.set(tc, true);
    await done;
    await up2(sessionId, { sessionUpdate: "tool_call_update", toolCallId: tc, status: "cancelled", capabilities: null });
    if (w.cancelled) {
      w.cancelled = false;
      return "cancelled"; // session/cancel: the whole turn
    }
    await say2(sessionId, "the watcher was cancelled");
    return "end_turn";
  }
  if (!serverId) {
    await say2(sessionId, "no MCP-over-ACP server was given");
    return "end_turn";
  }
  const r = /^run (.*)$/s.exec(text);
  if (r) {
    const out = await v2caller.request(v2client, serverId, "tools/call", {
      name: "run_command",
      arguments: { command: r[1] },
    });
    await say2(sessionId, `ran over mcp/message: ${JSON.stringify(mcpText(out))}`);
    return "end_turn";
  }
  const m = /^write (\S+) (.*)$/s.exec(text);
  if (m) {
    const out = await v2caller.request(v2client, serverId, "tools/call", {
      name: "write_file",
      arguments: { path: m[1], content: m[2] },
    });
    await say2(sessionId, `wrote over mcp/message: ${JSON.stringify(mcpText(out))}`);
    return "end_turn";
  }
  const out = await v2caller.request(v2client, serverId, "tools/call", { name: "read_file", arguments: { path: text } });
  await say2(sessionId, `client capabilities: ${JSON.stringify(v2caps)}\n\n`);
  await say2(sessionId, `v2 read over mcp/message: ${JSON.stringify(mcpText(out))}`);
  return "end_turn";
}

const appV2 = v2acp
  .agent()
  .onConnect((connection) => {
    v2client = connection.client;
  })
  .onRequest(v2.agent.initialize, (ctx) => {
    v2caps = ctx.params.capabilities ?? {};
    return {
    protocolVersion: 2,
    info: { name: "sdkagent-v2", version: "0" },
    capabilities: { session: { mcp: { acp: {} } } },
    };
  })
  .onRequest(v2.agent.session.new, (ctx) => {
    const sessionId = `sdk-v2-session-${v2servers.size + 1}`;
    const acpServer = (ctx.params.mcpServers ?? []).find((s) => s.type === "acp");
    v2servers.set(sessionId, acpServer?.serverId);
    v2work.set(sessionId, { background: new Map() });
    return { sessionId, availableCommands: [{ name: "v2cmd", description: "given in session/new's answer" }] };
  })
  .onRequest(v2.agent.session.prompt, (ctx) => {
    const { sessionId, prompt } = ctx.params;
    const text = prompt
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("")
      .trim();
    const messageId = `m-user-${++seq}`;
    // After the answer: the turn runs on, reported by state updates.
    setImmediate(async () => {
      try {
        await state(sessionId, "running");
        await up2(sessionId, { sessionUpdate: "user_message", messageId, content: prompt });
        const stopReason = await turn2(sessionId, text);
        await state(sessionId, "idle", {
          stopReason,
          usage: { totalTokens: 2222, inputTokens: 2000, outputTokens: 222 },
        });
      } catch (err) {
        await state(sessionId, "idle", { stopReason: "error", error: { code: -32603, message: String(err) } });
      }
    });
    return { messageId };
  })
  .onRequest(v2.agent.terminal.cancel, async (ctx) => {
    const { sessionId, terminalId } = ctx.params;
    const w = v2work.get(sessionId);
    if (!w?.background.has(terminalId)) {
      throw v2acp.RequestError.invalidParams({ terminalId }, "unknown or ended terminal");
    }
    setImmediate(async () => {
      await up2(sessionId, {
        sessionUpdate: "terminal_update",
        terminalId,
        exitStatus: { signal: "SIGTERM" },
        capabilities: null,
      });
      w.background.delete(terminalId);
      await state(sessionId, "idle");
    });
    return {};
  })
  .onRequest(v2.agent.toolCall.cancel, (ctx) => {
    const { sessionId, toolCallId } = ctx.params;
    const w = v2work.get(sessionId);
    if (!w?.tools?.get(toolCallId)) {
      throw v2acp.RequestError.invalidParams({ toolCallId }, "unknown or final tool call");
    }
    w.tools.delete(toolCallId);
    setImmediate(() => w.toolDone?.());
    return {};
  })
  .onNotification(v2.agent.session.cancel, (ctx) => {
    const w = v2work.get(ctx.params.sessionId);
    if (w?.toolDone) {
      w.cancelled = true;
      w.toolDone();
    }
  })
  .onNotification(v2.agent.mcp.message, v2caller.handleNotification);

const router = v2acp.agentProtocolRouter().withV1(app);
if (!args.includes("--v1-only")) {
  router.withV2(appV2);
}
const conn = router.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await conn.closed;
