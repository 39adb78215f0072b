// forkat.mjs SPEC.json WORKSPACE - does an adapter's session/fork with
// _meta.jetbrains.air.fork {version: 1, messageId} (JetBrains AIR's fork
// point, read by claude-agent-acp 0.101 and codex-acp 2.6) drop the turns
// after that message? Raw ACP over stdio, no client of ours: prompts ALPHA,
// BRAVO, CHARLIE (the mock's scenario "rewind"), a fork at turn 1's last
// agent message, then DELTA on the fork. The mock's request log tells what
// the model saw. SPEC.json: `scripts/real-agents env AGENT URL HOME --json`.
// See testdata/mockllm/README.md (issue 28). Not part of any test.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import readline from "node:readline";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const cwd = process.argv[3];
const child = spawn(spec.cmd[0], spec.cmd.slice(1), { cwd, env: { ...process.env, ...spec.env }, stdio: ["pipe", "pipe", "inherit"] });
let id = 0;
const pending = new Map();
const msgIds = []; // per turn: agent messageIds seen
let turn = -1;
const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
const call = (method, params) => new Promise((res, rej) => { const i = ++id; pending.set(i, { res, rej }); send({ jsonrpc: "2.0", id: i, method, params }); });
readline.createInterface({ input: child.stdout }).on("line", (line) => {
  let m; try { m = JSON.parse(line); } catch { return; }
  if (m.id !== undefined && (m.result !== undefined || m.error !== undefined) && m.method === undefined) {
    const p = pending.get(m.id); pending.delete(m.id);
    if (m.error) p.rej(new Error(JSON.stringify(m.error))); else p.res(m.result);
    return;
  }
  if (m.method === "session/update") {
    const u = m.params.update;
    if (u.sessionUpdate === "agent_message_chunk" && u.messageId && turn >= 0) {
      const l = msgIds[turn]; if (l[l.length - 1] !== u.messageId) l.push(u.messageId);
    }
    return;
  }
  if (m.method === "session/request_permission") {
    const opt = m.params.options.find((o) => o.kind === "allow_once") || m.params.options[0];
    send({ jsonrpc: "2.0", id: m.id, result: { outcome: { outcome: "selected", optionId: opt.optionId } } });
    return;
  }
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not here" } });
});
const prompt = async (sid, text) => { turn++; msgIds[turn] = []; const r = await call("session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] }); console.log("turn", turn + 1, r.stopReason, "messageIds", msgIds[turn]); };
const init = await call("initialize", { protocolVersion: 1, clientCapabilities: {} });
console.log("agent", init.agentInfo?.name, init.agentInfo?.version, "fork:", JSON.stringify(init.agentCapabilities?.sessionCapabilities?.fork));
const { sessionId } = await call("session/new", { cwd, mcpServers: [] });
await prompt(sessionId, "ALPHA: read a.txt, then change 'alpha one' to 'alpha two' in it.");
await prompt(sessionId, "BRAVO: read b.txt, then change 'bravo one' to 'bravo two' in it.");
await prompt(sessionId, "CHARLIE: read c.txt, change 'charlie one' to 'charlie two' in it, and create d.txt.");
const at = msgIds[0][msgIds[0].length - 1];
const fork = await call("session/fork", { sessionId, cwd, mcpServers: [], _meta: { jetbrains: { air: { fork: { version: 1, messageId: at } } } } });
console.log("forked at", at, "->", fork.sessionId);
console.log("MARK resend");
await prompt(fork.sessionId, "DELTA: read b.txt, then change 'bravo one' to 'bravo delta' in it.");
child.stdin.end(); child.kill();
process.exit(0);
