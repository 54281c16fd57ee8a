// Owns the record the session manager keeps for each live session: its workspace, tools, policy,
// history, settings, recorder, running turn and client. Only the shape: creating, finding and
// dropping sessions is session-manager.ts's, a turn on one session-turn.ts's.
import type { Message, ThoughtLevel } from "../llm/types.ts";
import type { SessionUsage } from "../llm/prices.ts";
import type { McpSessionTools } from "../mcp/types.ts";
import type { Policy } from "../policy/policy.ts";
import type { SandboxMode } from "../sandbox-modes.ts";
import type { ContextMeter } from "../agent/handoff.ts";
import type { SessionRecorder } from "./session-recorder.ts";
import type { ClientLink } from "./session-host.ts";
import type { SteeringInbox } from "./steering.ts";

export interface LiveSession {
  id: string;
  cwd: string;
  /** session/new's (load's, resume's, fork's) `additionalDirectories`: more workspace roots. */
  additionalDirectories: readonly string[];
  tools: McpSessionTools;
  policy: Policy;
  system: string;
  history: Message[];
  model: string;
  /** `thought_level`: how hard the model reasons (mapped by the provider). */
  thoughtLevel: ThoughtLevel;
  /** Tokens and cost so far, over every turn (saved with the session, restored on load). */
  usage: SessionUsage;
  /** The first prompt's first line, once there was one (session_info_update, session/list). */
  title: string | null;
  recorder?: SessionRecorder;
  meter: ContextMeter;
  /** `_Stop` objections left (STOP_MAX_REJECTIONS per session). */
  stopBudget: { left: number };
  turn?: AbortController;
  /** Settles when the running turn has ended (its answer recorded); set with `turn`. */
  turnEnded?: Promise<void>;
  /** `_session/steering` messages waiting for the running turn's next LLM request. */
  /** Terminals of background commands the client may cancel (v2's terminal/cancel), by terminal id. */
  backgroundTerminals?: Map<string, () => void>;
  steering?: SteeringInbox;
  client?: ClientLink;
  /** The `dev` shell's sandbox setting (host.sandbox), and whether its fail-closed notice was sent. */
  sandbox?: { mode: SandboxMode; noticed: boolean };
  /** The client was given the session's commands: a change to them is sent from then on. */
  announced?: boolean;
  /** A subagent's: the session whose `agent__task` call runs it (only cancel reaches it from a client). */
  parentId?: string;
  /** Subagent nesting: 0 (absent) for a client's session, 1 for its child, … (MAX_SUBAGENT_DEPTH). */
  depth?: number;
}
