// Owns one turn on a live session, a prompt's or a slash command's: opening it (one at a time; the
// request's abort cancels it), the tap its updates go through (recorded, then sent; shut at the
// answer), how it ends, and what the loop is given for it (TurnDeps and the lifecycle). Does not run
// the loop (agent/loop.ts) or decide what a prompt asks for (session-manager.ts, session-commands.ts).
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import type { Lifecycle, TurnDeps, TurnTotals } from "../agent/loop.ts";
import { withPlanTool } from "../agent/plan-mode.ts";
import { liveCost } from "./live-cost.ts";
import { withToolCancel } from "./tool-cancel.ts";
import { withTaskTool } from "../agent/task-tool.ts";
import { type SubagentHost, subagentRunner, topLevelParent } from "./subagents.ts";
import type { LiveSession } from "./live-session.ts";
import type { PromptIo, SessionHost } from "./session-host.ts";
import { log } from "../log.ts";
import type { McpSessionTools, McpToolInfo } from "../mcp/types.ts";

/** What a turn needs from the session manager besides the session itself. */
export interface TurnContext {
  host: SessionHost;
  /** session/set_mode, by id: plan mode's way out switches modes as a client would. */
  setMode(id: string, modeId: unknown): Promise<SessionUpdate[]>;
  /** What subagents (`agent__task`) need of the manager; undefined = no task tool. */
  subagents?: SubagentHost;
}

/** What a prompt or a command answers. */
export interface TurnAnswer {
  stopReason: StopReason;
  usage: TurnTotals;
}

export interface Turn {
  signal: AbortSignal;
  /** The tap: records an update, then sends it; silent once the turn ended. */
  emit(u: SessionUpdate): void;
  /** Records an update without sending it (its sender decides what the client sees); false, and
   *  nothing recorded, once the turn ended. */
  record(u: SessionUpdate): boolean;
  /** Sends an update without recording it (live shell output); silent once the turn ended. */
  send(u: SessionUpdate): void;
  /** Shuts the tap, drops what a turn that failed silently recorded (`discard`), makes the rest
   *  durable and frees the session. */
  end(discard?: boolean): void;
}

/**
 * Opens a turn on `s`. The tap is shut at the end because updates after the answer would break
 * "every update before the response".
 */
export function openTurn(s: LiveSession, io: PromptIo): Turn {
  const controller = new AbortController();
  s.turn = controller;
  let ended!: () => void;
  s.turnEnded = new Promise<void>((resolve) => (ended = resolve));
  const onRequestAbort = () => controller.abort();
  io.signal.addEventListener("abort", onRequestAbort, { once: true });
  let open = true;
  // Before any of the turn's own updates: the client hears that it runs (v2's state_update).
  io.turn?.({ state: "running" });
  return {
    signal: controller.signal,
    emit: (u: SessionUpdate) => {
      if (!open) return;
      s.recorder?.update(u);
      io.emit(u);
    },
    record: (u: SessionUpdate) => {
      if (open) s.recorder?.update(u);
      return open;
    },
    send: (u: SessionUpdate) => {
      if (open) io.emit(u);
    },
    end: (discard = false) => {
      open = false;
      io.signal.removeEventListener("abort", onRequestAbort);
      // Steering that came too late for the turn's last LLM request is not kept for the next prompt.
      const unread = s.steering?.clear() ?? 0;
      if (unread > 0) log.info("steering messages arrived after the turn's last LLM request; dropped", { session: s.id, count: unread });
      if (discard) s.recorder?.discardTurn();
      s.recorder?.endTurn();
      if (s.turn === controller) s.turn = undefined;
      ended();
    },
  };
}

/** What the loop is given for `turn` on `s`: the host's provider and limits, the session's settings and tools, the turn's tap. */
export function turnDeps(ctx: TurnContext, s: LiveSession, turn: Turn, io: PromptIo, totals: TurnTotals): TurnDeps {
  const h = ctx.host;
  const emit = turn.emit;
  // A notice is live, not history: sent past the recorder, and only to a client that shows them.
  const notice: TurnDeps["notice"] = io.caps?.notices ? (n) => io.emit({ sessionUpdate: "notice", ...n }) : undefined;
  // Plan mode's way out (plan__ready) switches modes as set_mode does; the client hears it at once.
  const planned = withPlanTool(s.tools, {
    policy: s.policy,
    emit,
    askPermission: io.askPermission,
    switchMode: async (mode) => {
      for (const u of await ctx.setMode(s.id, mode)) io.emit(u);
    },
    maxSteps: h.limits.TODO_ITEMS,
    maxStepChars: h.limits.TODO_ITEM_CHARS,
  });
  // The task tool while subagents may nest this deep (a client's session is depth 0).
  const sub = ctx.subagents;
  // A child is offered this turn's list as it is (subagents.ts): known once `tasked` is.
  const toolList = (): McpToolInfo[] => tasked.tools();
  const tasked: McpSessionTools = sub && (s.depth ?? 0) < h.limits.MAX_SUBAGENT_DEPTH ? withTaskTool(planned, subagentRunner(sub, topLevelParent(s, io, turn.record, totals, toolList)), h.limits.MAX_SUBAGENTS_PER_TURN) : planned;
  const tools = io.toolCallSignal ? withToolCancel(tasked, io.toolCallSignal) : tasked;
  return {
    provider: h.provider,
    model: s.model,
    thoughtLevel: s.thoughtLevel,
    maxTokens: h.maxTokens,
    contextWindow: h.contextWindow,
    system: s.system,
    tools,
    policy: s.policy,
    cwd: s.cwd,
    limits: h.limits,
    emit,
    notice,
    askPermission: io.askPermission,
    elicit: io.elicit,
    totals,
    cost: liveCost(h, s),
    ...(h.promptCache ? { promptCache: h.promptCache } : {}),
    cacheKey: s.id,
    lifecycle: lifecycle(h, s, io),
    steer: (history) => s.steering?.deliver(history, emit) ?? false,
    ...terminalShow(h, s, turn, io),
  };
}

/** Live shell output for a client that shows it, in a session it opened (a subagent's calls are
 *  shown as its parent's progress or as a child session: their output comes as text). */
function terminalShow(h: SessionHost, s: LiveSession, turn: Turn, io: PromptIo): Pick<TurnDeps, "terminal"> {
  const key = io.caps?.terminalOutput;
  if (!key || (s.depth ?? 0) > 0) return {};
  return {
    terminal: {
      key,
      flushMs: h.limits.TERMINAL_FLUSH_MS,
      maxBytes: h.limits.TERMINAL_OUTPUT_BYTES,
      send: turn.send,
      record: (u) => void turn.record(u),
      // A background command's terminal outlives its turn: the session's channel, and a cancel the
      // client may use (v2's terminal/cancel) while the session has it.
      sendLater: (u) => io.emit(u),
      kept: (id, cancel) => void (s.backgroundTerminals ??= new Map()).set(id, cancel),
      released: (id) => void s.backgroundTerminals?.delete(id),
    },
  };
}


function lifecycle(host: SessionHost, s: LiveSession, io: PromptIo): Lifecycle {
  const { limits } = host;
  return {
    meter: s.meter,
    hooks: { allowed: host.hookServers ?? [], timeoutMs: limits.HOOK_TIMEOUT_MS },
    stopBudget: s.stopBudget,
    ratio: limits.HANDOFF_RATIO,
    maxHandoffs: limits.MAX_HANDOFFS,
    compaction: io.caps?.compaction === true,
    onCompact: (history) => s.recorder?.compacted(history),
  };
}
