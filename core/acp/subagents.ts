// Owns running a subagent (SPEC §3.10): the child session of an `agent__task` call (its own context;
// the parent's workspace, tools, policy and sandbox), registered while it runs so a cancel reaches it
// alone; its turn (usage to the parent); its announcement, messages and answer as the tool result.
// What a client sees of it is subagent-view.ts's; the tool itself is agent/task-tool.ts's.
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import { randomId } from "../ids.ts";
import { log } from "../log.ts";
import { ContextMeter } from "../agent/handoff.ts";
import { runTurn, TurnError, type TurnDeps, type TurnTotals } from "../agent/loop.ts";
import { TASK_TOOL, taskCalls, type TaskRequest, type TaskRunner, toolResult } from "../agent/task-tool.ts";
import { PLAN_TOOL } from "../agent/plan-mode.ts";
import type { McpCallOptions, McpCallResult, McpSessionTools, McpToolInfo } from "../mcp/types.ts";
import { overlayTools } from "../mcp/tool-overlay.ts";
import type { LiveSession } from "./live-session.ts";
import type { PromptIo, SessionHost } from "./session-host.ts";
import { liveCost } from "./live-cost.ts";
import { markChild, SUBAGENT_META, SubagentView } from "./subagent-view.ts";
import { withToolCancel } from "./tool-cancel.ts";
import { cutChars } from "../text-bounds.ts";

/** What the session manager lends a subagent run. */
export interface SubagentHost {
  host: SessionHost;
  /** The model a task names, checked against the session's choices; throws (naming them) when unknown. */
  checkModel(model: string, current: string): Promise<string>;
  /** The child is a session of the manager while it runs (cancel, busy), and is not after. */
  register(child: LiveSession): void;
  unregister(child: LiveSession): void;
}

/** The manager's side of subagents: its host, its model choices and its table of live sessions. */
export function subagentHost(host: SessionHost, models: { check(model: string, current: string): Promise<string> }, sessions: Map<string, LiveSession>): SubagentHost {
  return {
    host,
    checkModel: (model, current) => models.check(model, current),
    register: (child) => void sessions.set(child.id, child),
    unregister: (child) => void (sessions.get(child.id) === child && sessions.delete(child.id)),
  };
}

/** A parent's side of its children: where its own updates go and how it asks the user. */
export interface SubagentParent {
  session: LiveSession;
  /** The tools the parent's model is offered, as its requests list them: a child is offered the same. */
  toolList(): McpToolInfo[];
  /** The top-level prompt's connection: what it shows, and its other sessions (`forSession`). */
  io: PromptIo;
  /** The parent's updates, recorded with the top-level session and shown as the client can. */
  emit(u: SessionUpdate): void;
  askPermission: PromptIo["askPermission"];
  totals: TurnTotals;
}

/** The parent's todo list: its plan, which a child's calls would overwrite. */
const TODO_TOOL = "dev__todo";

/**
 * The tools a child is offered: its parent's list, word for word, so the child's requests read the
 * tools and system prompt the parent's already wrote to the provider's cache. Its calls go to the
 * parent's servers (closed with the parent, not by the child), except those that are the parent's
 * own: the todo list and plan mode's way out are refused, and the task tool runs a subagent of the
 * child's (`task`) only while subagents may nest this deep.
 */
function childTools(parent: SubagentParent, tools: McpSessionTools, task: ((args: Record<string, unknown>, opts?: McpCallOptions) => Promise<McpCallResult>) | undefined, maxDepth: number): McpSessionTools {
  return overlayTools(tools, {
    borrowed: true,
    tools: () => parent.toolList(),
    call: (name, args, opts, next) => {
      if (name === TODO_TOOL) return Promise.resolve(toolResult("the todo list is your parent's plan, not yours: a subagent keeps its own steps in mind and reports what it found in its answer", true));
      if (name === PLAN_TOOL) return Promise.resolve(toolResult("presenting a plan is your parent's part: a subagent reports what it found in its answer", true));
      if (name === TASK_TOOL) return task ? task(args, opts) : Promise.resolve(toolResult(`task not started: a subagent cannot start its own subagents here (MAX_SUBAGENT_DEPTH = ${maxDepth}); do the work yourself`, true));
      return next(name, args, opts);
    },
  });
}

/**
 * The top-level parent's channel for the children of one turn: each update recorded with the session
 * (while `record` says the turn is open) and sent as the connection's client can see it.
 */
export function topLevelParent(session: LiveSession, io: PromptIo, record: (u: SessionUpdate) => boolean, totals: TurnTotals, toolList: () => McpToolInfo[]): SubagentParent {
  const capable = io.caps?.subagents === true && io.forSession !== undefined;
  const view = new SubagentView(capable);
  const ios = new Map<string, PromptIo>();
  const ioOf = (id: string) => {
    let child = ios.get(id);
    if (!child) ios.set(id, (child = io.forSession!(id)));
    return child;
  };
  return {
    session,
    toolList,
    io,
    totals,
    askPermission: io.askPermission,
    emit: (u) => {
      if (!record(u)) return;
      for (const s of view.show(u)) (s.sessionId ? ioOf(s.sessionId) : io).emit(s.update);
    },
  };
}

const firstLine = (text: string) => {
  const line = text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return cutAtCodePoint(line, 200);
};

/** One line of at most `max` code points: control characters (newlines too) made spaces, cut whole. */
function cutAtCodePoint(text: string, max: number): string {
  return cutChars(text.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]+/g, " ").trim(), max);
}

/** A child's permission question as its parent's client sees it: the tool's own title first (what
 *  "Always allow this exact command" is about), then which subagent asks, on one line. */
export function childAskTitle(toolTitle: string, description: string): string {
  return `${toolTitle} (subagent: ${cutAtCodePoint(description, 80)})`;
}

/** The text of the last assistant message of a child's history: its answer. */
function answerOf(history: LiveSession["history"]): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role === "assistant" && m.text.trim() !== "") return m.text;
  }
  return "";
}

/** The `agent__task` runner of `parent` (its children may have their own, up to MAX_SUBAGENT_DEPTH). */
export function subagentRunner(h: SubagentHost, parent: SubagentParent): TaskRunner {
  return async (task, opts) => {
    let model = parent.session.model;
    if (task.model !== undefined && task.model !== model) {
      try {
        model = await h.checkModel(task.model, model);
      } catch (err) {
        return toolResult(`task not started: ${err instanceof Error ? err.message : String(err)}`, true);
      }
    }
    return runChild(h, parent, task, model, opts);
  };
}

/** How a child speaks: its updates (marked as its own), its io on the connection when the client
 *  shows subagents, and how it asks permission or elicits (as itself, or on the parent's call). */
interface ChildVoice {
  emit(u: SessionUpdate): void;
  io?: PromptIo;
  askPermission: PromptIo["askPermission"];
  elicit?: PromptIo["elicit"];
}

function voiceOf(parent: SubagentParent, childId: string, callId: string, task: TaskRequest): ChildVoice {
  const capable = parent.io.caps?.subagents === true && parent.io.forSession !== undefined;
  const io = capable ? parent.io.forSession!(childId) : undefined;
  const emit = (u: SessionUpdate) => parent.emit(markChild(u, childId));
  if (!io) return { emit, askPermission: (ask, s) => parent.askPermission({ ...ask, toolCallId: callId, title: childAskTitle(ask.title, task.description) }, s) };
  // While any question of the child's is open, the parent's view of it says so (requires_action),
  // as the child's own state does.
  let open = 0;
  const waiting = async <T>(turn: AbortSignal, ask: () => Promise<T>): Promise<T> => {
    if (open++ === 0) parent.emit(loose({ sessionUpdate: "subagent_update", sessionId: childId, state: { state: "requires_action" } }));
    try {
      return await ask();
    } finally {
      if (--open === 0 && !turn.aborted) parent.emit(loose({ sessionUpdate: "subagent_update", sessionId: childId, state: { state: "running" } }));
    }
  };
  const elicit = io.elicit;
  return {
    emit,
    io,
    askPermission: (ask, s) => waiting(s, () => io.askPermission(ask, s)),
    ...(elicit ? { elicit: { modes: elicit.modes, ask: (id, e, s) => waiting(s, () => elicit.ask(id, e, s)) } } : {}),
  };
}

/** The child session: its own context (the task's prompt); the parent's workspace, tools, policy and sandbox. */
function newChild(p: LiveSession, task: TaskRequest, model: string): LiveSession {
  return {
    id: randomId(),
    cwd: p.cwd,
    additionalDirectories: p.additionalDirectories,
    tools: p.tools,
    policy: p.policy,
    system: p.system,
    history: [{ role: "user", content: [{ type: "text", text: task.prompt }] }],
    model,
    thoughtLevel: p.thoughtLevel,
    title: task.description,
    meter: new ContextMeter(),
    stopBudget: { left: 0 },
    ...(p.client ? { client: p.client } : {}),
    ...(p.sandbox ? { sandbox: p.sandbox } : {}),
    parentId: p.id,
    depth: (p.depth ?? 0) + 1,
    // The parent's totals object itself: the child's spend is the parent's.
    usage: p.usage,
  };
}

/** The child's turn: the loop's deps (no hooks; handoff within its own context; usage to the parent's totals). */
function childTurnDeps(h: SubagentHost, parent: SubagentParent, child: LiveSession, voice: ChildVoice): TurnDeps {
  const { host } = h;
  const maxDepth = host.limits.MAX_SUBAGENT_DEPTH;
  const self: SubagentParent = { session: child, toolList: parent.toolList, io: parent.io, emit: voice.emit, askPermission: voice.askPermission, totals: parent.totals };
  const task = (child.depth ?? 1) < maxDepth ? taskCalls(subagentRunner(h, self), host.limits.MAX_SUBAGENTS_PER_TURN) : undefined;
  let tools = childTools(parent, child.tools, task, maxDepth);
  if (voice.io?.toolCallSignal) tools = withToolCancel(tools, voice.io.toolCallSignal);
  return {
    provider: host.provider,
    model: child.model,
    thoughtLevel: child.thoughtLevel,
    maxTokens: host.maxTokens,
    contextWindow: host.contextWindow,
    system: child.system,
    tools,
    policy: child.policy,
    cwd: child.cwd,
    limits: host.limits,
    emit: voice.emit,
    askPermission: voice.askPermission,
    ...(voice.elicit ? { elicit: voice.elicit } : {}),
    totals: parent.totals,
    cost: liveCost(host, parent.session),
    ...(host.promptCache ? { promptCache: host.promptCache } : {}),
    cacheKey: child.id,
    lifecycle: {
      meter: child.meter,
      hooks: { allowed: [], timeoutMs: host.limits.HOOK_TIMEOUT_MS },
      stopBudget: child.stopBudget,
      ratio: host.limits.HANDOFF_RATIO,
      maxHandoffs: host.limits.MAX_HANDOFFS,
      compaction: voice.io !== undefined && parent.io.caps?.compaction === true,
      onCompact: () => {},
    },
    steer: (history) => child.steering?.deliver(history, voice.emit) ?? false,
  };
}

/** Before any of the child's traffic: its announcement, the parent's call naming it, the prompt sent
 *  from the parent's transcript, the child's running state and the prompt received in its transcript. */
function announce(parent: SubagentParent, voice: ChildVoice, child: LiveSession, callId: string, task: TaskRequest): void {
  const p = parent.session.id;
  const prompt: ContentBlock[] = [{ type: "text", text: task.prompt }];
  const [sent, received] = [randomId(), randomId()];
  parent.emit(loose({ sessionUpdate: "subagent_update", sessionId: child.id, title: task.description, description: firstLine(task.prompt), capabilities: { cancel: {} }, state: { state: "running" } }));
  parent.emit({ sessionUpdate: "tool_call_update", toolCallId: callId, _meta: { [SUBAGENT_META]: child.id } });
  parent.emit(loose({ sessionUpdate: "session_message", messageId: sent, senderSessionId: p, recipientSessionId: child.id, recipientMessageId: received, content: prompt }));
  // The child's own session: it runs, then receives its prompt.
  voice.io?.turn?.({ state: "running" });
  voice.emit(loose({ sessionUpdate: "session_message", messageId: received, senderSessionId: p, recipientSessionId: child.id, senderMessageId: sent, content: prompt }));
}

/** After the child's turn: its answer sent from its transcript and received in the parent's, and its final state. */
function reportEnd(parent: SubagentParent, voice: ChildVoice, child: LiveSession, answer: string, stopReason: string, failure: string | undefined): void {
  const p = parent.session.id;
  if (answer !== "") {
    const [out, back] = [randomId(), randomId()];
    const text: ContentBlock = { type: "text", text: answer };
    voice.emit(loose({ sessionUpdate: "session_message", messageId: out, senderSessionId: child.id, recipientSessionId: p, recipientMessageId: back }));
    voice.emit(loose({ sessionUpdate: "session_message_chunk", messageId: out, content: text }));
    parent.emit(loose({ sessionUpdate: "session_message", messageId: back, senderSessionId: child.id, recipientSessionId: p, senderMessageId: out }));
    parent.emit(loose({ sessionUpdate: "session_message_chunk", messageId: back, content: text }));
  }
  const error = failure !== undefined ? { code: -32603, message: failure } : undefined;
  // The child's own session ends with its turn; then its parent's view of it.
  voice.io?.turn?.({ state: "idle", end: error ? { error } : { stopReason }, final: true });
  const state = error ? { state: "idle", stopReason: "error", error } : { state: "idle", stopReason };
  parent.emit(loose({ sessionUpdate: "subagent_update", sessionId: child.id, state }));
}

/** What the model reads: the answer, or why there is none (`structured` names the child and how it stopped). */
function resultOf(childId: string, answer: string, stopReason: string, failure: string | undefined): McpCallResult {
  const structured = { sessionId: childId, stopReason };
  if (failure !== undefined) return toolResult(`the subagent failed: ${failure}`, true, structured);
  if (stopReason === "cancelled") {
    const partial = answer !== "" ? `\n\nWhat it had said so far:\n${answer}` : "";
    return toolResult(`The user cancelled this subagent before it finished.${partial}`, true, structured);
  }
  const note = stopReason === "end_turn" ? "" : `\n\n[the subagent stopped: ${stopReason}]`;
  return toolResult(`${answer === "" ? "(the subagent gave no answer)" : answer}${note}`, false, structured);
}

async function runChild(h: SubagentHost, parent: SubagentParent, task: TaskRequest, model: string, opts: McpCallOptions): Promise<McpCallResult> {
  const signal = opts.signal ?? new AbortController().signal;
  const callId = opts.callId ?? randomId();
  const child = newChild(parent.session, task, model);
  const voice = voiceOf(parent, child.id, callId, task);
  const controller = new AbortController();
  child.turn = controller;
  let ended!: () => void;
  child.turnEnded = new Promise<void>((resolve) => (ended = resolve));
  // Cancelling the parent (its turn, or this one call) cancels the child; cancelling the child does not reach the parent.
  const onParentAbort = () => controller.abort();
  signal.addEventListener("abort", onParentAbort, { once: true });
  if (signal.aborted) controller.abort();
  h.register(child);
  announce(parent, voice, child, callId, task);
  let stopReason: string;
  let failure: string | undefined;
  try {
    stopReason = await runTurn(childTurnDeps(h, parent, child, voice), child.history, controller.signal);
  } catch (err) {
    // Any failure ends the child as failed (its announcement must not stay "running"); one that is no
    // TurnError is a fault of ours, logged as such, and still reaches the model as the call's error.
    if (!(err instanceof TurnError)) log.error("subagent failed unexpectedly", { child: child.id, error: err });
    failure = err instanceof Error ? err.message : String(err);
    stopReason = "error";
  } finally {
    signal.removeEventListener("abort", onParentAbort);
    child.turn = undefined;
    child.steering?.clear();
    h.unregister(child);
    ended();
  }
  const answer = answerOf(child.history);
  reportEnd(parent, voice, child, answer, stopReason, failure);
  log.info("subagent ended", { session: parent.session.id, child: child.id, stopReason });
  return resultOf(child.id, answer, stopReason, failure);
}

/** An update of the unstable schema's kinds (subagent_update, session_message…), which the SDK's
 *  stable types do not list. */
function loose(u: Record<string, unknown>): SessionUpdate {
  return u as unknown as SessionUpdate; // the SDK's stable union has no member for these kinds
}
