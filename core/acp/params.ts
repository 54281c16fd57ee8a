// Owns reading a request's params as ACP v1's schema types them: every field the agent reads is checked
// as it is read, and one of the wrong type (or a required one missing) is -32602 naming the method and
// the field's path (also in `data.param`). Hand-written checks, no validator loaded: initialize and
// prompt sit on the start-up and hot paths (the server list's validator loads only when servers are
// declared). Also the params of initialize, session/new|load|resume|fork and the prompt's content blocks.
// Does not convert (convert.ts).
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { ContentBlock, McpServer } from "@agentclientprotocol/sdk";
import { lazySchema } from "../zod-issue.ts";
import { isObject } from "../wire/jsonrpc.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";
import { wellFormedDeep } from "../text-bounds.ts";

type Fields = Record<string, unknown>;

/** How a field may be absent: `required`; `optional` (may be left out); `nullable` (left out or null). */
export type Presence = "required" | "optional" | "nullable";

/** -32602 naming the field: `session/new: cwd must be …`. */
export function invalidParam(method: string, path: string, why: string): AcpError {
  return new AcpError(INVALID_PARAMS, `${method}: ${path} ${why}`, { param: path });
}

/** A value's kind, short, for an error message. */
function kindOf(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}


/** One object of a request's params (the params, or an object inside them), read field by field. */
export class ParamReader {
  private constructor(
    readonly method: string,
    readonly fields: Fields,
    readonly path: string,
  ) {}

  /** The request's params: an object, else -32602. Every request's params may carry `_meta`
   *  (an object or null); one of another type is named here, whatever the method. */
  static of(method: string, raw: unknown): ParamReader {
    if (!isObject(raw)) throw new AcpError(INVALID_PARAMS, `${method} needs params (an object), got ${kindOf(raw)}`, { param: "params" });
    const p = new ParamReader(method, raw, "");
    p.object("_meta", "nullable");
    return p;
  }

  get(key: string): unknown {
    return this.fields[key];
  }

  /** -32602 naming `key` of this object. */
  fail(key: string, why: string): AcpError {
    return invalidParam(this.method, this.path + key, why);
  }

  /** The field when `ok` says it has the type `want` describes; absent (per `presence`) is undefined. */
  check<T>(key: string, want: string, ok: (v: unknown) => v is T, presence: Presence = "required"): T | undefined {
    const v = this.fields[key];
    if (v === undefined && presence !== "required") return undefined;
    if (v === null && presence === "nullable") return undefined;
    if (ok(v)) return v;
    const allowed = presence === "nullable" ? `${want} or null` : want;
    throw this.fail(key, v === undefined ? `is missing (${allowed})` : `must be ${allowed}, got ${kindOf(v)}`);
  }

  /** A required non-empty string: a session id, a mode id, a model id. */
  id(key: string): string {
    return this.check(key, "a non-empty string", (v): v is string => typeof v === "string" && v !== "")!;
  }

  string(key: string, presence: Presence = "required"): string | undefined {
    return this.check(key, "a string", (v): v is string => typeof v === "string", presence);
  }

  boolean(key: string, presence: Presence = "optional"): boolean | undefined {
    return this.check(key, "a boolean", (v): v is boolean => typeof v === "boolean", presence);
  }

  integer(key: string, min: number, max: number): number {
    const ok = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
    return this.check(key, `an integer from ${min} to ${max}`, ok)!;
  }

  array(key: string, presence: Presence = "required"): unknown[] | undefined {
    return this.check(key, "an array", Array.isArray, presence);
  }

  /** Element `i` of array field `key`, an object read the same way (its fields: `key[i].field`). */
  element(key: string, i: number): ParamReader {
    const v = (this.fields[key] as unknown[])[i];
    if (!isObject(v)) throw this.fail(`${key}[${i}]`, `must be an object, got ${kindOf(v)}`);
    return new ParamReader(this.method, v, `${this.path}${key}[${i}].`);
  }

  /** An object field, read the same way (its fields are named `key.field`). */
  object(key: string, presence: Presence = "optional"): ParamReader | undefined {
    const v = this.check(key, "an object", isObject, presence);
    return v && new ParamReader(this.method, v, `${this.path}${key}.`);
  }
}

/**
 * session/prompt's `prompt`: an array of content blocks whose fields have the schema's types
 * (`prompt[2].annotations must be an object or null`). The fields conversion reads first (a text's
 * `text`, a link's or resource's `uri`, the `resource` itself) are checked where it reads them
 * (convert.ts), as is a block of a type the agent does not take (`unsupported content block: audio`).
 */
export function parsePrompt(p: ParamReader): ContentBlock[] {
  const blocks = p.array("prompt")!;
  if (blocks.length === 0) throw p.fail("prompt", "must hold at least one content block");
  for (let i = 0; i < blocks.length; i++) {
    if (!isObject(blocks[i])) throw invalidParam(p.method, `prompt[${i}]`, `must be a content block (an object with a type), got ${kindOf(blocks[i])}`);
    const b = p.element("prompt", i);
    b.string("type");
    b.object("annotations", "nullable");
    b.object("_meta", "nullable");
    const type = b.get("type");
    if (type === "image" || type === "audio") {
      b.string("data");
      b.string("mimeType");
      b.string("uri", "nullable");
    }
    if (type === "resource_link") {
      b.string("name");
      for (const key of ["title", "description", "mimeType"]) b.string(key, "nullable");
      b.check("size", "an integer", (v): v is number => Number.isSafeInteger(v), "nullable");
    }
    const resource = type === "resource" && isObject(b.get("resource")) ? b.object("resource") : undefined;
    if (resource) {
      resource.string("mimeType", "nullable");
      resource.string("text", "optional");
      resource.string("blob", "optional");
      resource.object("_meta", "nullable");
    }
  }
  // Well-formed where it enters (SPEC §3.10): a lone surrogate would make every later request of the
  // session fail at the provider.
  return wellFormedDeep(blocks) as ContentBlock[];
}

/** What the client said it can show (initialize's clientCapabilities.session): `notice` updates and
 *  `compaction_update`s. An object (`{}`) advertises one; absent or null does not. */
export interface ClientSessionCaps {
  notices: boolean;
  compaction: boolean;
  /** The elicitation modes it shows (`elicitation.form`, `elicitation.url`): `elicitation/create` is sent only in these. */
  elicitation: ("form" | "url")[];
  /** It shows subagents as child sessions (v1 `clientCapabilities.subagents`; v2's baseline). */
  subagents?: boolean;
  /** It shows a shell call's output live in a terminal (SPEC §3.3), under this `_meta` key of the
   *  tool call's updates: the v1 flag of that name it set (v2: a baseline, shown as v2's terminal updates). */
  terminalOutput?: "terminal_output" | "terminal_output_delta";
}

/** initialize: the protocol version the client asks for; the capabilities and client info it sends
 *  are checked against the schema's types (the agent reads `auth.terminal`, `session.notices` and
 *  `session.compaction`; a wrong type elsewhere is a client bug it should hear about, not one silently
 *  read as "no capability"). */
export function parseInitialize(raw: unknown): { protocolVersion: number; terminalAuth: boolean; session: ClientSessionCaps } {
  const p = ParamReader.of("initialize", raw);
  const protocolVersion = p.integer("protocolVersion", 0, 65535);
  const caps = p.object("clientCapabilities");
  let terminalAuth = false;
  const session: ClientSessionCaps = { notices: false, compaction: false, elicitation: [] };
  if (caps) {
    const fs = caps.object("fs");
    fs?.boolean("readTextFile");
    fs?.boolean("writeTextFile");
    caps.boolean("terminal");
    terminalAuth = caps.object("auth")?.boolean("terminal") === true;
    const sessionCaps = caps.object("session", "nullable");
    session.notices = sessionCaps?.object("notices", "nullable") !== undefined;
    session.compaction = sessionCaps?.object("compaction", "nullable") !== undefined;
    const elicitation = caps.object("elicitation", "nullable");
    for (const mode of ["form", "url"] as const) if (elicitation?.object(mode, "nullable") !== undefined) session.elicitation.push(mode);
    session.subagents = caps.object("subagents", "nullable") !== undefined;
    const meta = caps.object("_meta", "nullable");
    // Both set: the key that says what it carries.
    if (meta?.boolean("terminal_output_delta", "nullable") === true) session.terminalOutput = "terminal_output_delta";
    else if (meta?.boolean("terminal_output", "nullable") === true) session.terminalOutput = "terminal_output";
  }
  const info = p.object("clientInfo", "nullable");
  if (info) {
    info.string("name");
    info.string("version");
    info.string("title", "nullable");
    info.object("_meta", "nullable");
  }
  p.object("_meta", "nullable");
  return { protocolVersion, terminalAuth, session };
}

/** A session's workspace must be an existing directory, named by an absolute path: else -32602 naming cwd
 *  (or `field`: an additional directory, `additionalDirectories[2]`). */
export function checkCwd(cwd: unknown, method: string, field = "cwd"): string {
  const bad = (why: string) => invalidParam(method, field, why);
  if (typeof cwd !== "string" || cwd === "") throw bad(`must be an absolute path to a directory, got ${JSON.stringify(cwd)}`);
  if (cwd.includes("\0")) throw bad("must not contain a NUL byte");
  if (!isAbsolute(cwd)) throw bad(`must be an absolute path, got ${JSON.stringify(cwd)}`);
  let isDir: boolean;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw bad(`${cwd} cannot be used: ${code === "ENOENT" ? "no such directory" : (err as Error).message}`);
  }
  if (!isDir) throw bad(`${cwd} is not a directory`);
  return cwd;
}

const serverSchema = lazySchema((z) => {
  const pairs = z.array(z.object({ name: z.string(), value: z.string() }).loose());
  return z.union([
    z.object({ type: z.enum(["http", "sse"]), name: z.string(), url: z.string(), headers: pairs }).loose(),
    z.object({ name: z.string(), command: z.string().min(1), args: z.array(z.string()), env: pairs }).loose(),
    // MCP-over-ACP (unstable schema; the SDK's stable types do not know it)
    z.object({ type: z.literal("acp"), name: z.string(), serverId: z.string().min(1) }).loose(),
  ]);
});

export interface NewSessionParams {
  cwd: string;
  /** Extra workspace roots (absolute, existing directories), in the client's order, without repeats. */
  additionalDirectories: string[];
  mcpServers: McpServer[];
  _meta?: Record<string, unknown>;
}

/**
 * session/new params (and what load and resume share with it). `mcpServers` left out or null is none,
 * as the schema's default says. `_meta.systemPrompt` is a string (replaces the system prompt) or
 * `{append: string}`. The server validator loads only when the request declares servers.
 */
export async function parseNewSession(raw: unknown, method = "session/new"): Promise<NewSessionParams> {
  const p = ParamReader.of(method, raw);
  const cwd = checkCwd(p.get("cwd"), method);
  const extra = p.check("additionalDirectories", "an array of absolute paths", Array.isArray, "nullable") ?? [];
  const additionalDirectories = [...new Set(extra.map((d, i) => checkCwd(d, method, `additionalDirectories[${i}]`)))];
  const list = p.array("mcpServers", "nullable") ?? [];
  const schema = list.length > 0 ? await serverSchema() : undefined;
  const mcpServers = list.map((s, i) => {
    const r = schema!.safeParse(s);
    if (!r.success) {
      throw invalidParam(method, `mcpServers[${i}]`, `must be {name, command, args, env}, {type: "http"|"sse", name, url, headers} or {type: "acp", name, serverId}`);
    }
    return r.data as McpServer;
  });
  const meta = p.object("_meta", "nullable");
  if (meta && typeof meta.get("systemPrompt") !== "string") meta.object("systemPrompt", "nullable")?.string("append");
  return { cwd, additionalDirectories, mcpServers, _meta: meta?.fields };
}

/** session/load and session/resume params: a session id plus what session/new takes. */
export async function parseLoadSession(raw: unknown, method: "session/load" | "session/resume" | "session/fork"): Promise<NewSessionParams & { sessionId: string }> {
  const sessionId = ParamReader.of(method, raw).id("sessionId");
  return { ...(await parseNewSession(raw, method)), sessionId };
}
