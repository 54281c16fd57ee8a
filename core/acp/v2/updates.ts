// Owns the ACP v2 shape of a session's updates: the session manager's (v1-shaped) updates translated
// into v2's upserts by id (messages and chunks with a messageId, tool calls as `tool_call_update`,
// plans as `plan_update` under one plan id, commands and config options in v2's fields) and the
// foreground `state_update`s. Keeps, per session, what a translation needs (which tool calls are
// final, the open message ids). Does not send anything (server.ts) or run turns (session-manager.ts).
import type { SessionConfigOption, SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import { randomId } from "../../ids.ts";
import { namedChild, SUBAGENT_META } from "../subagent-view.ts";

/** A v2 session update: the schema's `SessionUpdate` of `schema/v2/schema.json` (kept loose here). */
export type V2Update = { sessionUpdate: string } & Record<string, unknown>;

export type V2StopReason = "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled";

/** A v2 update of `kind`: every v2 update this module makes is written through here (the v2 schema test
 *  checks each kind named in a `v2Update("…")` call validates). */
export function v2Update(kind: string, fields: Record<string, unknown>): V2Update {
  return { sessionUpdate: kind, ...fields };
}

const FINAL = new Set(["completed", "failed", "cancelled"]);
/** The `_meta` keys of a v1 live terminal (live-terminal.ts). */
const TERMINAL_KEYS = ["terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit", "terminal_background"];

interface TerminalMeta {
  terminal_id: string;
  data?: string;
  cwd?: string;
  exit_code?: number | null;
  signal?: string | null;
}

function base64(text: string | undefined): string {
  return Buffer.from(text ?? "", "utf8").toString("base64");
}
const SUBAGENT_KINDS = new Set<string>(["subagent_update", "session_message", "session_message_chunk"]);

/** A subagent call's result says its child was cancelled (the task runner's structured output). */
function childCancelled(rawOutput: unknown): boolean {
  return (rawOutput as { stopReason?: unknown } | null | undefined)?.stopReason === "cancelled";
}

/** v1 config options (`id`) as v2's (`configId`); everything else is the same. */
export function configOptionsV2(options: SessionConfigOption[]): Record<string, unknown>[] {
  return options.map(({ id, ...rest }) => ({ configId: id, ...rest }));
}

/** v1 commands as v2's (`type: "command"`, input `type: "text"`). */
export function commandsV2(commands: { name: string; description: string; input?: { hint: string } | null }[]): Record<string, unknown>[] {
  return commands.map(({ input, ...c }) => ({ type: "command", ...c, ...(input ? { input: { type: "text", hint: input.hint } } : {}) }));
}

/** A v1 tool call content item in v2: a diff as one file change, a terminal as the agent-owned
 *  terminal it names (Tendril's terminals are all its own: v2 has no client terminals). */
function contentV2(c: ToolCallContent): Record<string, unknown> | undefined {
  if (c.type === "content") return c;
  if (c.type === "terminal") return { type: "terminal", terminalId: c.terminalId };
  if (c.type === "diff") {
    const operation = c.oldText === null || c.oldText === undefined ? "add" : "modify";
    return { type: "diff", changes: [{ operation, path: c.path }], ...(c._meta ? { _meta: c._meta } : {}) };
  }
  return undefined;
}

/** One session's translation state. */
export class V2SessionUpdates {
  /** Tool calls seen, by id: whether each is final (completed, failed, cancelled). */
  readonly #calls = new Map<string, { final: boolean; cancelRequested: boolean; child?: string }>();
  /** Ids for chunks the engine sent without one (user prompt replays): one per run of chunks. */
  #chunkRun: { kind: string; id: string } | undefined;
  /** The session's one plan (our plan is always whole: each update replaces it). */
  readonly planId = randomId();
  /** Terminals of commands running in the background; undefined until the session has had one
   *  (from then on every state snapshot lists them, as the schema asks). */
  #background: Set<string> | undefined;
  #backgroundChanged = false;

  /** The background work a state snapshot lists (undefined: never reported for this session). */
  background(): { type: "terminal"; terminalId: string }[] | undefined {
    return this.#background && [...this.#background].map((terminalId) => ({ type: "terminal" as const, terminalId }));
  }

  /** Whether the background list changed since this was last asked (a snapshot is then due). */
  takeBackgroundChange(): boolean {
    const changed = this.#backgroundChanged;
    this.#backgroundChanged = false;
    return changed;
  }

  /** Whether tool call `id` is known and not yet final. */
  callState(id: string): "unknown" | "final" | "running" {
    const c = this.#calls.get(id);
    return !c ? "unknown" : c.final ? "final" : "running";
  }

  /** Marks a tool call the client asked to cancel: its failure is then reported as `cancelled`. */
  requestCancel(id: string): void {
    const c = this.#calls.get(id);
    if (c) c.cancelRequested = true;
  }

  /** The v2 updates for one v1 update (none for what v2 has no place for, such as modes). */
  translate(u: SessionUpdate): V2Update[] {
    switch (u.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        const messageId = u.messageId ?? this.#runId(u.sessionUpdate);
        if (u.messageId) this.#chunkRun = undefined;
        return [v2Update(u.sessionUpdate, { messageId, content: u.content })];
      }
      case "tool_call":
      case "tool_call_update":
        return this.#withTerminal(u);
      case "plan":
        return [v2Update("plan_update", { plan: { type: "items", planId: this.planId, entries: u.entries } })];
      case "available_commands_update":
        return [v2Update("available_commands_update", { availableCommands: commandsV2(u.availableCommands) })];
      case "config_option_update":
        return [v2Update("config_option_update", { configOptions: configOptionsV2(u.configOptions) })];
      case "current_mode_update":
        // v2 has no modes: the `mode` config option (config_option_update) carries the change.
        return [];
      case "session_info_update":
      case "usage_update":
      case "notice":
      case "compaction_update":
      case "compaction_summary_chunk":
        return [u as V2Update];
      default:
        // Subagents: the same shapes in v2 (its unstable schema; the stable one's open update union).
        return SUBAGENT_KINDS.has((u as { sessionUpdate: string }).sessionUpdate) ? [u as V2Update] : [];
    }
  }

  /**
   * A call with a live terminal (v1's `_meta.terminal_*`, live-terminal.ts) in v2: the terminal
   * announced with `terminal_update` before the call names it, its output as `terminal_output_chunk`s,
   * its exit as `terminal_update.exitStatus` before the call's end.
   */
  #withTerminal(u: Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>): V2Update[] {
    const meta = u._meta;
    if (!meta || !TERMINAL_KEYS.some((k) => k in meta)) return [this.#toolCall(u)];
    const { terminal_info: info, terminal_output: output, terminal_output_delta: delta, terminal_exit: exit, terminal_background: kept, ...rest } = meta as Record<string, TerminalMeta | undefined>;
    const out: V2Update[] = [];
    if (info) {
      const command = (u.rawInput as { command?: unknown } | undefined)?.command;
      out.push(v2Update("terminal_update", { terminalId: info.terminal_id, ...(typeof command === "string" ? { command } : {}), ...(info.cwd ? { cwd: info.cwd } : {}) }));
    }
    // Either key carries the bytes since the previous update (live-terminal.ts): appended, as chunks are.
    for (const o of [output, delta]) if (o) out.push(v2Update("terminal_output_chunk", { terminalId: o.terminal_id, data: base64(o.data) }));
    if (exit) {
      // A background terminal's exit is reported before the snapshot that no longer lists it; its
      // cancel is no longer offered.
      const wasKept = this.#background?.delete(exit.terminal_id) === true;
      out.push(v2Update("terminal_update", { terminalId: exit.terminal_id, exitStatus: { exitCode: exit.exit_code ?? null, signal: exit.signal ?? null }, ...(wasKept ? { capabilities: null } : {}) }));
      if (wasKept) this.#backgroundChanged = true;
    }
    if (kept && !exit) {
      // Its call returned with the command running: the client may cancel it (terminal/cancel), and
      // the next snapshot lists it (it was announced when the call started).
      out.push(v2Update("terminal_update", { terminalId: kept.terminal_id, capabilities: { cancel: {} } }));
      (this.#background ??= new Set()).add(kept.terminal_id);
      this.#backgroundChanged = true;
    }
    const call = { ...u, _meta: Object.keys(rest).length > 0 ? rest : undefined };
    if (call._meta === undefined) delete call._meta;
    // An output-only update says nothing about the call itself.
    const onlyOutput = u.sessionUpdate === "tool_call_update" && Object.keys(call).every((k) => k === "sessionUpdate" || k === "toolCallId");
    if (!onlyOutput) out.push(this.#toolCall(call));
    return out;
  }

  #runId(kind: string): string {
    if (this.#chunkRun?.kind !== kind) this.#chunkRun = { kind, id: randomId() };
    return this.#chunkRun.id;
  }

  #toolCall(u: Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>): V2Update {
    this.#chunkRun = undefined;
    const { sessionUpdate, content, ...fields } = u;
    const known = this.#calls.get(u.toolCallId);
    const state = known ?? { final: false, cancelRequested: false };
    this.#calls.set(u.toolCallId, state);
    const out = v2Update("tool_call_update", fields);
    // A call that runs a subagent names it as `session` content (v1 has only `_meta` for it).
    const named = namedChild(u);
    if (named !== undefined) {
      state.child = named;
      const { [SUBAGENT_META]: _named, ...meta } = u._meta ?? {};
      if (Object.keys(meta).length > 0) out._meta = meta;
      else delete out._meta;
    }
    const session = state.child !== undefined ? [{ type: "session", sessionId: state.child }] : [];
    if (content !== undefined) out.content = content === null ? null : [...session, ...content.flatMap((c) => contentV2(c) ?? [])];
    else if (named !== undefined) out.content = session;
    if (u.status === "failed" && (state.cancelRequested || (state.child !== undefined && childCancelled(u.rawOutput)))) out.status = "cancelled";
    // A new call that runs can be cancelled on its own (tool_call/cancel) until it is final.
    if (!known && !FINAL.has(u.status ?? "")) out.capabilities = { cancel: {} };
    if (u.status && FINAL.has(u.status)) {
      state.final = true;
      if (known) out.capabilities = null;
    }
    return out;
  }
}

/** A `state_update`: `running`, `requires_action`, or `idle` with the turn's stop reason (or its error). */
export function stateUpdate(state: "running" | "requires_action"): V2Update;
export function stateUpdate(state: "idle", stop?: V2StopReason | { error: { code: number; message: string; data?: unknown } }): V2Update;
export function stateUpdate(state: "running" | "requires_action" | "idle", stop?: V2StopReason | { error: { code: number; message: string; data?: unknown } }): V2Update {
  if (state !== "idle" || stop === undefined) return v2Update("state_update", { state });
  if (typeof stop === "string") return v2Update("state_update", { state, stopReason: stop });
  return v2Update("state_update", { state, stopReason: "error", error: stop.error });
}
