// Owns the structural identity of an MCP server: SHA-256 of canonical JSON (sorted keys, no undefined)
// of what decides its behaviour. Names are labels and never part of it. Does not decide sharing (pool.ts does).
import { sha256Hex } from "../ids.ts";
import type { McpServerSpec } from "./types.ts";

/** JSON with object keys sorted at every depth and undefined members dropped, so equal values hash equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The fingerprint of a server as it would run: `cwd` is the effective working directory (the spec's own,
 * else the session's) and only matters for stdio. The transport is included so an `http` and an `sse`
 * declaration of one URL stay distinct.
 */
export function fingerprint(spec: McpServerSpec, sessionCwd: string): string {
  const stdio = spec.transport === "stdio";
  const identity = {
    transport: spec.transport,
    command: stdio ? spec.command : undefined,
    args: stdio ? (spec.args ?? []) : undefined,
    env: stdio ? (spec.env ?? {}) : undefined,
    cwd: stdio ? (spec.cwd ?? sessionCwd) : undefined,
    // A confined server's writable root is the session's workspace, whatever its own cwd.
    sandbox: stdio && spec.sandbox && spec.sandbox !== "off" ? [spec.sandbox, sessionCwd] : undefined,
    url: stdio ? undefined : spec.url,
    headers: stdio ? undefined : (spec.headers ?? {}),
  };
  return sha256Hex(canonicalJson(identity));
}
