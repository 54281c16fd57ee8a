// What an editor sees of a background command (SPEC §3.3): on v1 its display terminal keeps
// streaming past the call and the turn and ends with `terminal_exit`; on v2 the terminal is announced,
// offers `capabilities.cancel`, is listed as background work in `state_update` snapshots (after its
// announcement) and removed after its exit, and `terminal/cancel` ends it. The real shell tool with
// real processes, behind the in-memory agent and a scripted model; every message schema-checked.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpSessionTools, McpToolInfo } from "../core/mcp/types.ts";
import { ShellTool } from "../tools/dev/shell.ts";
import { standInTools } from "./in-memory.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { requestAsked, schemaFailures, sendAsked } from "./acp-validate.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-bg-editor-")));
const root = join(base, "root");
mkdirSync(root);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A pool whose sessions get the real shell (and its background tools) beside the stand-ins. */
function shellPool() {
  return {
    async openTools(): Promise<McpSessionTools> {
      const shell = new ShellTool({
        root,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
        artifactDir: join(base, "artifacts"),
        limits: { inlineBytes: 50 * 1024, inlineLines: 2000, tailBytes: 8 * 1024, captureBytes: 1024 * 1024, defaultTimeoutS: 30, maxTimeoutS: 60, artifacts: 8, maxRunning: 16 },
      });
      const stand = standInTools();
      const info = (tool: string, liveOutput: boolean, readOnly: boolean): McpToolInfo => ({ qualifiedName: `dev__${tool}`, server: "dev", tool, description: tool, inputSchema: { type: "object" }, readOnly, hook: false, ...(liveOutput ? { liveOutput: true } : {}) });
      const reply = (r: { text: string; isError?: boolean; structured?: Record<string, unknown> }) => ({ content: [{ type: "text" as const, text: r.text }], text: r.text, isError: r.isError === true, ...(r.structured ? { structured: r.structured } : {}) });
      return {
        ...stand,
        tools: () => [...stand.tools(), info("shell", true, false), info("shell_kill", false, true)],
        async call(name, args, opts) {
          if (name === "dev__shell") return reply(await shell.call(args as never, opts?.signal ?? new AbortController().signal, false, opts?.onOutput, opts?.onEnd));
          if (name === "dev__shell_kill") return reply(await shell.kill(args as { id: string }));
          return stand.call(name, args, opts);
        },
        close: async () => {
          await shell.stopAll();
          await stand.close();
        },
      };
    },
  };
}

const updatesOf = (a: MemoryAgent, sessionId: string) => a.out.filter((m) => m.method === "session/update" && m.params.sessionId === sessionId).map((m) => m.params.update);

test("v1: a background command's display terminal keeps streaming past its call and the turn, and ends with terminal_exit", async () => {
  const a = memoryAgent({ mode: "yolo", pool: shellPool() });
  const asked = new Map<unknown, string>();
  await requestAsked(a, asked, "initialize", { protocolVersion: 1, clientCapabilities: { _meta: { terminal_output: true } } });
  const sessionId = (await requestAsked(a, asked, "session/new", { cwd: root, mcpServers: [] })).result.sessionId;
  a.provider.push({ calls: [{ id: "bg", name: "dev__shell", input: { command: "for i in 1 2 3 4; do echo tick $i; sleep 0.3; done", background: true } }] }, { text: "Started it." });
  const answer = await requestAsked(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "start it" }] });
  expect(answer.result.stopReason).toBe("end_turn");
  const answeredAt = a.out.findIndex((m) => m.id !== undefined && m.result?.stopReason !== undefined);
  const call = () => updatesOf(a, sessionId).filter((u) => u.toolCallId === "bg");
  // the call's result keeps its terminal (background), no exit yet
  const kept = call().find((u) => u._meta?.terminal_background);
  expect(kept).toBeDefined();
  expect(call().some((u) => u._meta?.terminal_exit)).toBe(false);
  await a.until(() => call().some((u) => u._meta?.terminal_exit), "the terminal's exit", 15_000);
  const exit = call().find((u) => u._meta?.terminal_exit)!;
  expect(exit._meta.terminal_exit).toMatchObject({ terminal_id: kept._meta.terminal_background.terminal_id, exit_code: 0, signal: null });
  const streamed = call().filter((u) => u._meta?.terminal_output).map((u) => u._meta.terminal_output.data).join("");
  expect(streamed).toContain("tick 4");
  // some of it came after the turn's answer
  const lastOutput = a.out.findLastIndex((m) => m.params?.update?.toolCallId === "bg" && m.params.update._meta?.terminal_output);
  expect(lastOutput).toBeGreaterThan(answeredAt);
  expect(schemaFailures(a.out, asked, ["v1"])).toEqual([]);
  await a.close();
});

test("v2: a background terminal is announced, offers cancel, is listed in state snapshots, and terminal/cancel ends it (exit before the snapshot without it)", async () => {
  const a = memoryAgent({ mode: "yolo", pool: shellPool() });
  const asked = new Map<unknown, string>();
  await requestAsked(a, asked, "initialize", { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} });
  const sessionId = (await requestAsked(a, asked, "session/new", { cwd: root, mcpServers: [] })).result.sessionId;
  a.provider.push({ calls: [{ id: "bg", name: "dev__shell", input: { command: "echo up; exec sleep 60", background: true } }] }, { text: "Running." });
  sendAsked(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "start it" }] });
  const states = () => updatesOf(a, sessionId).filter((u) => u.sessionUpdate === "state_update");
  await a.until(() => states().some((u) => u.state === "idle" && u.stopReason === "end_turn"), "the turn's end", 15_000);
  const all = updatesOf(a, sessionId);
  const announced = all.findIndex((u) => u.sessionUpdate === "terminal_update" && u.command !== undefined);
  const terminalId = all[announced].terminalId as string;
  const cancellable = all.findIndex((u) => u.sessionUpdate === "terminal_update" && u.terminalId === terminalId && u.capabilities?.cancel);
  const listed = all.findIndex((u) => u.sessionUpdate === "state_update" && u.background?.some((b: any) => b.terminalId === terminalId));
  expect(announced).toBeGreaterThanOrEqual(0);
  expect(cancellable).toBeGreaterThan(announced);
  expect(listed).toBeGreaterThan(announced);
  // every snapshot from then on lists the background work
  expect(states().slice(states().findIndex((u) => u.background)).every((u) => Array.isArray(u.background))).toBe(true);
  // the client cancels it
  const cancel = await requestAsked(a, asked, "terminal/cancel", { sessionId, terminalId });
  expect(cancel.result).toEqual({});
  await a.until(() => updatesOf(a, sessionId).some((u) => u.sessionUpdate === "terminal_update" && u.terminalId === terminalId && u.exitStatus), "the exit", 15_000);
  await a.until(() => states().at(-1)?.background?.length === 0, "a snapshot without it", 5000);
  const after = updatesOf(a, sessionId);
  const exited = after.findIndex((u) => u.sessionUpdate === "terminal_update" && u.terminalId === terminalId && u.exitStatus);
  const removed = after.findIndex((u, i) => i > listed && u.sessionUpdate === "state_update" && Array.isArray(u.background) && u.background.length === 0);
  expect(after[exited].capabilities).toBeNull();
  expect(removed).toBeGreaterThan(exited);
  // a second cancel, or an unknown terminal: -32602
  expect((await requestAsked(a, asked, "terminal/cancel", { sessionId, terminalId })).error.code).toBe(-32602);
  expect((await requestAsked(a, asked, "terminal/cancel", { sessionId, terminalId: "no-such" })).error.code).toBe(-32602);
  expect(schemaFailures(a.out, asked, ["v2", "v2u"])).toEqual([]);
  await a.close();
});
