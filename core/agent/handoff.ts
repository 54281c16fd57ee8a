// Owns keeping a session's context inside the model's window: the estimate of context use (the
// provider's last reported usage plus the growth since, else the text size), and the handoff when it
// passes HANDOFF_RATIO: a summary from the model, history replaced by the original task + summary +
// `_PostCompact` output; past MAX_HANDOFFS, or when a summary cannot be had, the oldest turns are
// dropped instead; and how the client sees it (`compaction_update`s when advertised, else a thought).
// Does not decide when a turn runs (loop.ts) or persist anything (its caller does).
import { randomId } from "../ids.ts";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { LlmProvider, Message, ToolSpec, Usage, UserPart } from "../llm/types.ts";
import { log } from "../log.ts";
import type { McpSessionTools } from "../mcp/types.ts";
import { type HookOptions, runHooks } from "./hooks.ts";
import { isContextNote } from "./turn-context.ts";

/**
 * Characters per token for the size-based estimate. It is a floor under the provider's report: a
 * server that reports no usage (or too little) must not let the history grow past the window.
 */
const CHARS_PER_TOKEN = 4;

const SUMMARY_PROMPT =
  "The conversation is about to exceed the context window. Write a handoff summary for yourself: the task, " +
  "what has been done (files changed, commands run, results), what was learned, what remains, and any " +
  "exact details (paths, names, errors) needed to continue. Answer with the summary only.";

/** What a session knows about its context size between turns. */
export class ContextMeter {
  #reported?: { tokens: number; historyLength: number };
  handoffs = 0;

  /** After an LLM response: its request plus output, with the history length once it is recorded. */
  report(tokens: number, historyLength: number): void {
    this.#reported = { tokens, historyLength };
  }

  /** Estimated tokens the next request will use: the last report plus the growth since, or the size. */
  estimate(system: string, history: Message[], tools: ToolSpec[]): number {
    const bySize = (system.length + toolsSize(tools) + sizeOf(history)) / CHARS_PER_TOKEN;
    const r = this.#reported;
    if (!r || r.historyLength > history.length) return bySize;
    return Math.max(bySize, r.tokens + sizeOf(history.slice(r.historyLength)) / CHARS_PER_TOKEN);
  }

  /** History was replaced: what was reported no longer describes it. */
  reset(): void {
    this.#reported = undefined;
  }
}

// The estimate runs before every request (and repeatedly while dropping turns): each message's and each
// tool's size is measured once. History messages are never changed once in the history (a handoff
// replaces them), and a tool's input schema is one object for the session's life.
const messageChars = new WeakMap<Message, number>();
const schemaChars = new WeakMap<object, { description: string; chars: number }>();

function sizeOf(messages: Message[]): number {
  let n = 0;
  for (const m of messages) {
    let size = messageChars.get(m);
    if (size === undefined) {
      size = 0;
      if (m.role === "user") for (const p of m.content) size += p.type === "text" ? p.text.length : p.data.length;
      else if (m.role === "assistant") size += m.text.length + JSON.stringify(m.toolCalls).length;
      else for (const r of m.results) size += r.content.length + 40;
      messageChars.set(m, size);
    }
    n += size;
  }
  return n;
}

/** JSON.stringify(tools).length, each input schema (and the description beside it) serialized once. */
function toolsSize(tools: ToolSpec[]): number {
  let n = tools.length > 0 ? tools.length + 1 : 2; // brackets and commas
  for (const t of tools) {
    let sized = schemaChars.get(t.inputSchema);
    if (sized?.description !== t.description) {
      const schema = sized ? sized.chars - JSON.stringify(sized.description).length : JSON.stringify(t.inputSchema).length;
      sized = { description: t.description, chars: schema + JSON.stringify(t.description).length };
      schemaChars.set(t.inputSchema, sized);
    }
    // {"name":…,"description":…,"inputSchema":…}
    n += 39 + JSON.stringify(t.name).length + sized.chars;
  }
  return n;
}

export interface HandoffDeps {
  provider: LlmProvider;
  model: string;
  maxTokens: number;
  system: string;
  tools: McpSessionTools;
  offered: ToolSpec[];
  contextWindow: number;
  ratio: number;
  maxHandoffs: number;
  hooks: HookOptions;
  meter: ContextMeter;
  emit(update: SessionUpdate): void;
  /** The client advertised `session.compaction`: show a handoff as `compaction_update`s. */
  compaction?: boolean;
  /** The history was replaced (persist it). */
  onCompact(history: Message[]): void;
  /** The summary request's tokens (they are billed like any other response). */
  onUsage?(usage: Usage): void;
}

/** Hands off when the next request would pass the ratio; the history is changed in place. */
export async function keepWithinWindow(d: HandoffDeps, history: Message[], signal: AbortSignal): Promise<void> {
  const before = d.meter.estimate(d.system, history, d.offered);
  if (before <= d.ratio * d.contextWindow || history.length < 2) return;
  await handOff(d, history, signal, before, `~${Math.round(before)} tokens would pass ${d.ratio} of the ${d.contextWindow}-token window`);
}

/**
 * Hands off now, asked by the user (`/compact`): the same summary (or, past MAX_HANDOFFS, the same
 * dropping of old turns down to the ratio). The last request was answered, so none is carried over.
 * False when there is nothing to compact (fewer than two messages).
 */
export async function compactNow(d: HandoffDeps, history: Message[], signal: AbortSignal): Promise<boolean> {
  if (history.length < 2) return false;
  const before = d.meter.estimate(d.system, history, d.offered);
  await handOff(d, history, signal, before, `asked with /compact at ~${Math.round(before)} tokens`, false);
  return !signal.aborted;
}

async function handOff(d: HandoffDeps, history: Message[], signal: AbortSignal, before: number, why: string, carryLatest = true): Promise<void> {
  const show = compactionShow(d);
  try {
    await handOffShown(d, history, signal, before, why, carryLatest, show);
  } catch (err) {
    show.failed(err instanceof Error ? err.message : String(err));
    throw err;
  }
}

/** How the client sees one handoff: `compaction_update`s (in_progress, then completed, failed or
 *  cancelled) when it advertised `session.compaction`, else one `agent_thought_chunk` at the end. */
function compactionShow(d: HandoffDeps) {
  const compactionId = randomId();
  const thought = (text: string) => d.emit({ sessionUpdate: "agent_thought_chunk", messageId: randomId(), content: { type: "text", text } });
  if (d.compaction) d.emit({ sessionUpdate: "compaction_update", compactionId, status: "in_progress" });
  return {
    completed(line: string, summary: string | undefined) {
      if (!d.compaction) return thought(line);
      const blocks = [line, ...(summary === undefined ? [] : [summary])].map((text) => ({ type: "text" as const, text }));
      d.emit({ sessionUpdate: "compaction_update", compactionId, status: "completed", summary: blocks });
    },
    failed(error: string) {
      if (d.compaction) d.emit({ sessionUpdate: "compaction_update", compactionId, status: "failed", error });
      else thought(`[context handoff] failed: ${error}`);
    },
    cancelled() {
      if (d.compaction) d.emit({ sessionUpdate: "compaction_update", compactionId, status: "cancelled" });
    },
  };
}

async function handOffShown(
  d: HandoffDeps,
  history: Message[],
  signal: AbortSignal,
  before: number,
  why: string,
  carryLatest: boolean,
  show: ReturnType<typeof compactionShow>,
): Promise<void> {
  const limit = d.ratio * d.contextWindow;
  let how: string;
  const asked = d.meter.handoffs < d.maxHandoffs ? await summarize(d, history, signal) : undefined;
  if (signal.aborted) return show.cancelled();
  const summary = asked?.summary;
  if (summary !== undefined) {
    d.meter.handoffs++;
    const post = await runHooks(d.tools, "_PostCompact", d.hooks, signal);
    const parts = [taskOf(history), `[Context handoff ${d.meter.handoffs}: the conversation so far was summarized to fit the context window.]`, `Summary:\n${summary}`];
    for (const p of post) parts.push(`[${p.server} _PostCompact]\n${p.text}`);
    const latest = carryLatest ? latestRequest(history) : undefined;
    if (latest !== undefined) parts.push(`Latest request (answer this):\n${latest}`);
    history.splice(0, history.length, { role: "user", content: [{ type: "text", text: parts.join("\n\n") }] });
    how = `summarized the conversation (handoff ${d.meter.handoffs} of at most ${d.maxHandoffs})`;
  } else {
    const dropped = dropOldestTurns(history, (h) => d.meter.estimate(d.system, h, d.offered) <= limit);
    const reason = d.meter.handoffs >= d.maxHandoffs ? `MAX_HANDOFFS ${d.maxHandoffs} reached` : `no summary could be had${asked?.error ? `: ${asked.error}` : ""}`;
    if (dropped === 0) {
      // Nothing changed: the history is as it was, so nothing is persisted.
      log.warn("context handoff failed", { before: Math.round(before), reason });
      return show.failed(`${why}: ${reason}, and there were no older turns to drop`);
    }
    how = `dropped the ${dropped} oldest messages (${reason})`;
  }
  d.meter.reset();
  const after = Math.round(d.meter.estimate(d.system, history, d.offered));
  const text = `[context handoff] ${why}: ${how}; now ~${after} tokens.`;
  log.info("context handoff", { before: Math.round(before), after, how });
  show.completed(text, summary);
  d.onCompact(history);
}

/** A recorded `compaction_update` as a client without `session.compaction` is shown it on load: the
 *  finished one as the thought chunk it would have seen live; the in-progress and cancelled ones not at
 *  all. Any other update is unchanged. */
export function withoutCompaction(u: SessionUpdate): SessionUpdate | undefined {
  if (u.sessionUpdate !== "compaction_update") return u;
  const thought = (text: string): SessionUpdate => ({ sessionUpdate: "agent_thought_chunk", messageId: randomId(), content: { type: "text", text } });
  if (u.status === "completed") return thought((u.summary ?? []).flatMap((b) => (b.type === "text" ? [b.text] : [])).slice(0, 1).join(""));
  if (u.status === "failed") return thought(`[context handoff] failed: ${u.error ?? "unknown error"}`);
  return undefined;
}

/** The session's first user message: the original task, kept through every handoff. */
function taskOf(history: Message[]): string {
  const first = history.find((m) => m.role === "user");
  const text = first?.role === "user" ? promptText(first.content) : "";
  return text.startsWith("Original task:") ? text.split("\n\n[Context handoff")[0]! : `Original task:\n${text}`;
}

/** The turn's own prompt, when it is not the original task: the model must still answer it. */
function latestRequest(history: Message[]): string | undefined {
  const at = history.findLastIndex((m) => m.role === "user");
  const m = history[at];
  if (at <= 0 || m?.role !== "user") return undefined;
  return promptText(m.content);
}

/** A user message's own words: its text parts without the per-turn note. */
function promptText(content: UserPart[]): string {
  return content.flatMap((p) => (p.type === "text" && !isContextNote(p.text) ? [p.text] : [])).join("\n");
}

async function summarize(d: HandoffDeps, history: Message[], signal: AbortSignal): Promise<{ summary?: string; error?: string }> {
  // The summary request must fit the window itself: its oldest turns go first (the first message,
  // which carries the task and any earlier summary, stays).
  const seen = [...history];
  const room = d.ratio * d.contextWindow - (SUMMARY_PROMPT.length + d.system.length) / 4;
  dropOldestTurns(seen, (h) => new ContextMeter().estimate("", h, []) <= room);
  const messages: Message[] = [...seen, { role: "user", content: [{ type: "text", text: SUMMARY_PROMPT }] }];
  // A trailing tool result must be answered before a new user message: close it with an assistant word.
  if (seen.at(-1)?.role === "tool") messages.splice(seen.length, 0, { role: "assistant", text: "(continuing after a summary)", toolCalls: [] });
  let text = "";
  for await (const ev of d.provider.stream({ model: d.model, system: d.system, messages, tools: [], maxTokens: d.maxTokens, signal })) {
    if (ev.type === "text") text += ev.text;
    if (ev.type === "done") d.onUsage?.(ev.usage);
    if (ev.type === "error") {
      log.warn("handoff summary failed; dropping the oldest turns instead", { error: ev.error.message });
      return { error: ev.error.message };
    }
  }
  return text.trim() === "" ? { error: "the model answered with an empty summary" } : { summary: text.trim() };
}

/**
 * Removes whole turns after the first user message (a turn starts at a user message), oldest first,
 * then, within one long turn, the oldest tool call + result pairs, until `fits` or only the latest
 * exchange is left. The history stays valid for every provider. Returns how many messages went.
 */
export function dropOldestTurns(history: Message[], fits: (h: Message[]) => boolean): number {
  let dropped = 0;
  while (!fits(history)) {
    const next = history.findIndex((m, i) => i > 1 && m.role === "user");
    if (next > 1) {
      dropped += next - 1;
      history.splice(1, next - 1);
      continue;
    }
    // One turn left: [user, …, assistant(calls), tool, assistant(calls), tool, …] — drop its oldest pair.
    const pair = history.findIndex((m, i) => i >= 1 && m.role === "assistant" && history[i + 1]?.role === "tool" && i + 2 < history.length);
    if (pair < 0) break;
    dropped += 2;
    history.splice(pair, 2);
  }
  return dropped;
}
