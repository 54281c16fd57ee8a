// Owns JSON-RPC 2.0 message classification: request / notification / response / malformed, with
// the error code and message a malformed line must be answered with; and the one list of error codes
// (JSON-RPC's and ACP's) and of the ACP protocol version this codebase speaks. Does no I/O.
import { jsonValueEnd } from "./json-check.ts";

export type JsonRpcId = string | number;

/** A JSON object: not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error object: a numeric code and a message (data, when present, is anything). */
export function isJsonRpcError(v: unknown): v is JsonRpcError {
  return isObject(v) && typeof v.code === "number" && typeof v.message === "string";
}

export type Classified =
  | { kind: "request"; id: JsonRpcId; method: string; params: unknown; message: Record<string, unknown> }
  | {
      kind: "notification";
      method: string;
      params: unknown;
      message: Record<string, unknown>;
      /** The params' text as read, when the line was checked rather than parsed (classifyRelayedNotification). */
      paramsText?: string;
    }
  | { kind: "response"; id: JsonRpcId | null; result?: unknown; error?: JsonRpcError; message: Record<string, unknown> }
  | { kind: "malformed"; id: JsonRpcId | null; error: JsonRpcError };

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** A request the caller cancelled with `$/cancel_request` (the range LSP reserves; ACP uses it too). */
export const REQUEST_CANCELLED = -32800;
/** JSON-RPC server-error range, used by ACP for "authentication required". */
export const AUTH_REQUIRED = -32000;
/** ACP: the session id names no session this agent has. */
export const SESSION_NOT_FOUND = -32002;
/** The two ends speak different ACP protocol versions (no standard code; in the server-error range). */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The ACP protocol versions (wire `protocolVersion`) this codebase speaks: v1 everywhere, v2 where an
 *  end offers or answers it (the agent, `tendril prompt`'s client). */
export const ACP_V1 = 1;
export const ACP_V2 = 2;

function isId(v: unknown): v is JsonRpcId {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

function invalid(id: JsonRpcId | null, message: string): Classified {
  return { kind: "malformed", id, error: { code: INVALID_REQUEST, message: `Invalid request: ${message}` } };
}

/** The JSON of one line, or the parse error it answers. */
function parseLine(text: string): { value: unknown } | Classified {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const why = err instanceof Error ? err.message : "not JSON";
    return { kind: "malformed", id: null, error: { code: PARSE_ERROR, message: `Parse error: ${why}` } };
  }
}

/** Classifies one line of text. Never throws. */
export function classifyLine(text: string): Classified {
  const parsed = parseLine(text);
  return "value" in parsed ? classifyMessage(parsed.value) : parsed;
}

/** Classifies one line that may hold a batch: its entries each classified (an empty batch, or one
 *  inside a batch, is an invalid request). Never throws. */
export function classifyBatchLine(text: string): Classified | Classified[] {
  const parsed = parseLine(text);
  return "value" in parsed ? classifyBatchValue(parsed.value) : parsed;
}

/** Classifies an already-parsed value that may be a batch, as classifyBatchLine does. Never throws. */
export function classifyBatchValue(value: unknown): Classified | Classified[] {
  if (!Array.isArray(value)) return classifyMessage(value);
  if (value.length === 0) return invalid(null, "an empty batch");
  return value.map((entry) => (Array.isArray(entry) ? invalid(null, "a batch inside a batch") : classifyMessage(entry)));
}

/** Classifies an already-parsed value. Never throws. */
export function classifyMessage(value: unknown): Classified {
  if (Array.isArray(value)) return invalid(null, "batches are not supported");
  if (typeof value !== "object" || value === null) return invalid(null, "a message must be a JSON object");
  const m = value as Record<string, unknown>;
  const id = isId(m.id) ? m.id : null;
  if (m.id !== undefined && m.id !== null && !isId(m.id)) return invalid(null, "id must be a string or a number");
  if (m.jsonrpc !== "2.0") return invalid(id, 'jsonrpc must be "2.0"');
  if (m.method !== undefined) {
    if (typeof m.method !== "string" || m.method === "") return invalid(id, "method must be a non-empty string");
    if (m.params !== undefined && (typeof m.params !== "object" || m.params === null)) {
      return invalid(id, "params must be an object or an array");
    }
    if (m.id === undefined) return { kind: "notification", method: m.method, params: m.params, message: m };
    if (id === null) return invalid(null, "a request id must not be null");
    return { kind: "request", id, method: m.method, params: m.params, message: m };
  }
  if (m.id === undefined) return invalid(null, "neither method nor id");
  const hasResult = Object.hasOwn(m, "result");
  const hasError = Object.hasOwn(m, "error");
  if (hasResult === hasError) return invalid(id, "a response needs exactly one of result or error");
  if (hasError) {
    const e = m.error;
    if (!isJsonRpcError(e)) return invalid(id, "error must have a numeric code and a message");
    return { kind: "response", id, error: e, message: m };
  }
  return { kind: "response", id, result: m.result, message: m };
}

/**
 * The text of a notification's params inside the line it was read from, when the line is spelled as
 * JSON.stringify spells one (`{"jsonrpc":"2.0","method":M,"params":…}`, nothing else): what a relay
 * wraps without serializing the params again. Undefined for any other spelling. A duplicate key after
 * the params stays inside the text, where parsing it again gives the same last-wins value.
 */
export function paramsTextOf(line: string, message: Record<string, unknown>): string | undefined {
  const method = message.method;
  if (typeof method !== "string" || message.params === undefined || line.charCodeAt(line.length - 1) !== 125 /* } */) return undefined;
  let keys = 0;
  for (const _ in message) keys++;
  if (keys !== 3) return undefined;
  const prefix = `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":`;
  return line.startsWith(prefix) ? line.slice(prefix.length, -1) : undefined;
}

const NOTIFICATION_HEAD = '{"jsonrpc":"2.0","method":"';
const PARAMS_KEY = ',"params":';

/**
 * A notification line spelled as JSON.stringify spells one (`{"jsonrpc":"2.0","method":M,"params":P}`,
 * M without escapes, P an object or an array), checked as JSON without being parsed: classified as
 * classifyLine classifies it, with its params' text; the params are parsed when first read (on the
 * classification or its message alike), so a relay that passes the line on as read never builds them.
 * Undefined for any other line (classify it instead: a malformed one gets its error from there).
 */
export function classifyRelayedNotification(text: string): Classified | undefined {
  if (!text.startsWith(NOTIFICATION_HEAD)) return undefined;
  const methodEnd = text.indexOf('"', NOTIFICATION_HEAD.length);
  if (methodEnd <= NOTIFICATION_HEAD.length || !text.startsWith(PARAMS_KEY, methodEnd + 1)) return undefined;
  for (let i = NOTIFICATION_HEAD.length; i < methodEnd; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c === 92 /* \ */) return undefined;
  }
  const start = methodEnd + 1 + PARAMS_KEY.length;
  const open = text.charCodeAt(start);
  if ((open !== 123 /* { */ && open !== 91) /* [ */ || text.charCodeAt(text.length - 1) !== 125 /* } */) return undefined;
  if (jsonValueEnd(text, start) !== text.length - 1) return undefined;
  const paramsText = text.slice(start, -1);
  const message = new CheckedMessage(text.slice(NOTIFICATION_HEAD.length, methodEnd), paramsText);
  return new CheckedNotification(message, paramsText);
}

const UNREAD = Symbol("unread");

/** A notification's message whose params are parsed from their (checked) text when first read; as JSON
 *  (trace, a message pipe's size) it is the message the line spells. */
class CheckedMessage {
  [key: string]: unknown;
  readonly jsonrpc = "2.0";
  #params: unknown = UNREAD;
  readonly #text: string;
  constructor(
    readonly method: string,
    paramsText: string,
  ) {
    this.#text = paramsText;
  }
  get params(): unknown {
    if (this.#params === UNREAD) this.#params = JSON.parse(this.#text);
    return this.#params;
  }
  set params(value: unknown) {
    this.#params = value;
  }
  toJSON(): Record<string, unknown> {
    return { jsonrpc: this.jsonrpc, method: this.method, params: this.params };
  }
}

/** classifyRelayedNotification's classification: its params are its message's. */
class CheckedNotification {
  readonly kind = "notification" as const;
  readonly method: string;
  constructor(
    readonly message: CheckedMessage,
    readonly paramsText: string,
  ) {
    this.method = message.method;
  }
  get params(): unknown {
    return this.message.params;
  }
}

export function errorResponse(id: JsonRpcId | null, error: JsonRpcError): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error };
}
