// Owns what a client sees of a subagent (SPEC §3.10), live and on replay: the parent's record holds the
// announcement, the call naming the child, the messages and the child's updates marked with its id; a
// client with `subagents` gets those under the child's id, any other the child's tool calls as the
// parent call's progress. Does not run children (subagents.ts) or send (the caller routes `show`).
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { withoutCompaction } from "../agent/handoff.ts";
import type { ClientSessionCaps } from "./params.ts";

/** The `_meta` key a recorded child update carries: the child's session id. */
const CHILD_KEY = "tendril/subagent";
/** The `_meta` key naming the child on the parent's tool call (v1; v2 maps it to session content). */
export const SUBAGENT_META = "subagentSessionId";

/** What a child update is to be sent as: the update, and the session it belongs to (absent: the parent). */
export interface Shown {
  sessionId?: string;
  update: SessionUpdate;
}

type Meta = Record<string, unknown> | null | undefined;
const metaOf = (u: SessionUpdate): Meta => (u as { _meta?: Meta })._meta;

/** A child's update as its parent records it. One already marked is a grandchild's passing through
 *  its parent (MAX_SUBAGENT_DEPTH > 1): it keeps the session it belongs to. */
export function markChild(u: SessionUpdate, childId: string): SessionUpdate {
  if (typeof metaOf(u)?.[CHILD_KEY] === "string") return u;
  return { ...u, _meta: { ...(metaOf(u) ?? {}), [CHILD_KEY]: childId } } as SessionUpdate;
}

/** The child a recorded update belongs to, and the update as the child sent it; undefined for the parent's own. */
function childOf(u: SessionUpdate): { childId: string; update: SessionUpdate } | undefined {
  const meta = metaOf(u);
  const childId = meta?.[CHILD_KEY];
  if (typeof childId !== "string") return undefined;
  const { [CHILD_KEY]: _child, ...rest } = meta!;
  const update = { ...u } as SessionUpdate & { _meta?: Meta };
  if (Object.keys(rest).length > 0) update._meta = rest;
  else delete update._meta;
  return { childId, update };
}

/** The child a parent-level tool call update names, if any. */
export function namedChild(u: SessionUpdate): string | undefined {
  if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") return undefined;
  const id = metaOf(u)?.[SUBAGENT_META];
  return typeof id === "string" ? id : undefined;
}

const SUBAGENT_KINDS = new Set(["subagent_update", "session_message", "session_message_chunk"]);
const PROGRESS_LINES = 64; // child tool calls listed in the parent's progress; later ones are counted

interface ChildProgress {
  title: string;
  parentCall?: string;
  calls: Map<string, { title: string; status: string }>;
}

/** The view of one connection (live: one per child run; replay: one for the whole history). */
export class SubagentView {
  readonly #children = new Map<string, ChildProgress>();
  /** Tool calls of children, by id: which child (a replay's closing update for one names no child). */
  readonly #childCalls = new Map<string, string>();

  constructor(private readonly subagents: boolean) {}

  /** Whether `u` is shown as it is, to the parent, with nothing for the view to note: no `_meta` (so
   *  no child's update and no call naming a child), no child's call seen yet, not a subagent kind.
   *  Then show(u) is `[{ update: u }]`; a replay sends it without asking (the common case, cheaply). */
  plain(u: SessionUpdate): boolean {
    return this.#childCalls.size === 0 && metaOf(u) == null && !SUBAGENT_KINDS.has(u.sessionUpdate);
  }

  show(u: SessionUpdate): Shown[] {
    const child = childOf(u);
    if (child) {
      if ("toolCallId" in child.update) this.#childCalls.set(child.update.toolCallId as string, child.childId);
      return this.subagents ? [{ sessionId: child.childId, update: child.update }] : this.#progress(child.childId, child.update);
    }
    // A child's call left open when the agent stopped is closed, on replay, as a parent-level update.
    const owner = "toolCallId" in u ? this.#childCalls.get(u.toolCallId as string) : undefined;
    if (owner) return this.subagents ? [{ sessionId: owner, update: u }] : this.#progress(owner, u);
    const kind: string = u.sessionUpdate;
    if (kind === "subagent_update") {
      const fields: Record<string, unknown> = u;
      if (typeof fields.sessionId === "string" && typeof fields.title === "string" && fields.title) this.#progressOf(fields.sessionId).title = fields.title;
    }
    const named = namedChild(u);
    if (named) this.#progressOf(named).parentCall = (u as { toolCallId: string }).toolCallId;
    if (this.subagents) return [{ update: u }];
    if (SUBAGENT_KINDS.has(kind) || (named && u.sessionUpdate === "tool_call_update" && u.status === undefined)) return [];
    return [{ update: u }];
  }

  #progressOf(childId: string): ChildProgress {
    let p = this.#children.get(childId);
    if (!p) this.#children.set(childId, (p = { title: "subagent", calls: new Map() }));
    return p;
  }

  /** A child's tool call as a line of the parent call's content (other child updates are not shown). */
  #progress(childId: string, u: SessionUpdate): Shown[] {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") return [];
    const p = this.#progressOf(childId);
    const known = p.calls.get(u.toolCallId);
    const title = u.title ?? known?.title ?? u.toolCallId;
    const status = u.status ?? known?.status ?? "pending";
    if (known && known.title === title && known.status === status) return [];
    p.calls.set(u.toolCallId, { title, status });
    if (!p.parentCall) return [];
    const lines = [...p.calls.values()].map((c) => `- ${c.title} (${c.status})`);
    const more = lines.length > PROGRESS_LINES ? `\n… and ${lines.length - PROGRESS_LINES} more` : "";
    const text = `Subagent: ${p.title}\n${lines.slice(0, PROGRESS_LINES).join("\n")}${more}`;
    return [{ update: { sessionUpdate: "tool_call_update", toolCallId: p.parentCall, status: "in_progress", content: [{ type: "content", content: { type: "text", text } }] } }];
  }
}

/**
 * A loaded session's saved updates, replayed as the loading client saw them live: a handoff as
 * `compaction_update`s only to a client that shows them; a subagent's updates under its own id (its
 * announcement first) to one that shows subagents, else as the parent call's progress.
 */
export function replayUpdates(updates: SessionUpdate[], caps: ClientSessionCaps | undefined, replay: (u: SessionUpdate, sessionId?: string) => void): void {
  const view = new SubagentView(caps?.subagents === true);
  const compaction = caps?.compaction === true;
  for (let i = 0; i < updates.length; i++) {
    const shown = compaction ? updates[i]! : withoutCompaction(updates[i]!);
    if (!shown) continue;
    if (view.plain(shown)) replay(shown);
    else for (const s of view.show(shown)) replay(s.update, s.sessionId);
  }
}
