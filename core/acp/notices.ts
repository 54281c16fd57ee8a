// Owns what a session tells its client outside a turn, as ACP `notice` updates: an MCP server that
// stopped, restarted or was withdrawn, and a sandbox setting that cannot work here. When to send them
// (only to a client that advertised notices) is session-manager.ts's and, for the sandbox, session-config.ts's.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { McpServerEvent } from "../mcp/types.ts";
import type { SandboxMode } from "../sandbox-modes.ts";

/** A server's death, restart or withdrawal as the `notice` the client shows. */
export function serverNotice(e: McpServerEvent): SessionUpdate {
  const what = { died: ["warning", "stopped"], restarted: ["info", "restarted"], gone: ["error", "is gone"] } as const;
  const [severity, verb] = what[e.kind];
  return { sessionUpdate: "notice", severity, title: `MCP server ${e.server} ${verb}`, description: e.detail };
}

/** A confined sandbox setting that cannot work here: every shell command will fail, saying why. */
export function sandboxNotice(mode: SandboxMode, problem: string): SessionUpdate {
  return { sessionUpdate: "notice", severity: "error", title: `The sandbox (${mode}) cannot work here: shell commands will fail`, description: problem };
}
