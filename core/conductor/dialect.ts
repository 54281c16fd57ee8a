// Owns the three proxy dialects a component may speak and how a message is wrapped for, or unwrapped from,
// "proxy successor" form in each (`proxy/*` of the ACP SDK 2.4 unstable schema, the older `_proxy/*` with
// `meta`, the sacp conductors' `initialize` + `_meta.proxy` and `_proxy/successor/*`), and the initialize
// each component is offered (ACP version capped at CHAIN_MAX_VERSION). No I/O, no state: see router.ts.
import { isObject } from "../wire/jsonrpc.ts";

export type Dialect = "proxy" | "underscore" | "sacp";

/** The order in which an unknown proxy is tried: each answers -32601 to the previous one's initialize. */
export const DIALECT_ORDER: readonly Dialect[] = ["proxy", "underscore", "sacp"];

export type Params = Record<string, unknown> | unknown[] | undefined;

/** An inner message carried by a successor wrapper. */
export interface Inner {
  method: string;
  params: Params;
  /** Hop-local metadata of the wrapper (`_meta`, or `meta` in the underscore dialect). */
  meta?: unknown;
}

const INIT_METHODS: Record<string, Dialect> = { "proxy/initialize": "proxy", "_proxy/initialize": "underscore" };

/** Is `method` one of the spellings of initialize? (plain `initialize` included) */
export function isInitialize(method: string): boolean {
  return method === "initialize" || Object.hasOwn(INIT_METHODS, method);
}

/** The dialect a proxy-initialize request announces, undefined for a plain (agent) initialize. */
export function dialectOfInitialize(method: string, params: Params): Dialect | undefined {
  if (Object.hasOwn(INIT_METHODS, method)) return INIT_METHODS[method];
  if (method === "initialize" && isObject(params) && isObject(params._meta) && params._meta.proxy === true) return "sacp";
  return undefined;
}

/** The newest ACP version the conductor routes: a client's requested version is offered down the chain
 *  as is, up to this (v2); each component answers its own, and the router checks that they agree. */
export const CHAIN_MAX_VERSION = 2;

function atChainVersion<P extends Params>(params: P): P {
  if (!isObject(params) || typeof params.protocolVersion !== "number" || params.protocolVersion <= CHAIN_MAX_VERSION) return params;
  return { ...params, protocolVersion: CHAIN_MAX_VERSION };
}

/** The initialize request a component gets: as a proxy in `dialect`, or as the agent (dialect undefined);
 *  at most CHAIN_MAX_VERSION. */
export function initializeFor(dialect: Dialect | undefined, params: Params): { method: string; params: Params } {
  const plain = atChainVersion(withoutProxyMeta(params));
  if (dialect === "proxy") return { method: "proxy/initialize", params: plain };
  if (dialect === "underscore") return { method: "_proxy/initialize", params: plain };
  if (dialect === "sacp") {
    const base = isObject(plain) ? plain : {};
    return { method: "initialize", params: { ...base, _meta: { ...(isObject(base._meta) ? base._meta : {}), proxy: true } } };
  }
  return { method: "initialize", params: plain };
}

/** The protocolVersion an initialize answer names, undefined when it names none. */
export function answeredVersion(result: unknown): number | undefined {
  return isObject(result) && typeof result.protocolVersion === "number" ? result.protocolVersion : undefined;
}

/** The initialize answer as a predecessor in `dialect` expects it: sacp wants `_meta.proxy: true` back
 *  (its handshake is two-way); everyone else gets the answer without the hop-local marker. */
export function initializeAnswerFor(dialect: Dialect | undefined, result: unknown): unknown {
  if (dialect !== "sacp") return isObject(result) ? withoutProxyMeta(result) : result;
  const base = isObject(result) ? result : {};
  return { ...base, _meta: { ...(isObject(base._meta) ? base._meta : {}), proxy: true } };
}

function withoutProxyMeta<P extends Params>(params: P): P {
  if (!isObject(params) || !isObject(params._meta) || !("proxy" in params._meta)) return params;
  const { proxy: _drop, ...rest } = params._meta;
  const out = { ...params };
  if (Object.keys(rest).length === 0) delete out._meta;
  else out._meta = rest;
  return out;
}

/** The dialect whose successor wrapper `method` is, if it is one. */
export function successorDialect(method: string): Dialect | undefined {
  if (method === "proxy/successor") return "proxy";
  if (method === "_proxy/successor") return "underscore";
  if (method === "_proxy/successor/request" || method === "_proxy/successor/notification") return "sacp";
  return undefined;
}

/** If `method` is a successor wrapper in any dialect, its dialect and the inner message; else undefined. */
export function unwrapSuccessor(method: string, params: Params): { dialect: Dialect; inner: Inner } | undefined {
  const dialect = successorDialect(method);
  if (dialect === undefined || !isObject(params) || typeof params.method !== "string") return undefined;
  const inner: Inner = { method: params.method, params: params.params as Params };
  const meta = dialect === "underscore" ? (params.meta ?? params._meta) : params._meta;
  if (meta !== undefined) inner.meta = meta;
  return { dialect, inner };
}

/** The line of the wrapper carrying notification `inner` in `dialect`, its params given as their JSON
 *  text (jsonrpc.ts paramsTextOf): exactly JSON.stringify of the message wrapSuccessor describes. Undefined
 *  when the wrapper carries hop-local metadata (then it is serialized whole). */
export function wrappedNotificationLine(dialect: Dialect, inner: Inner, paramsText: string): string | undefined {
  if (inner.meta !== undefined) return undefined;
  return `{"jsonrpc":"2.0","method":"${successorMethod(dialect, false)}","params":{"method":${JSON.stringify(inner.method)},"params":${paramsText}}}`;
}

/** The wrapper carrying notification `inner` in `dialect`, as wrappedNotificationLine spells it, and
 *  its message (as wrapSuccessor describes it), which reads `inner.params` only when its own are read. */
export function wrappedNotification(dialect: Dialect, inner: Inner, paramsText: string): { line: string; message: Record<string, unknown> } | undefined {
  const line = wrappedNotificationLine(dialect, inner, paramsText);
  if (line === undefined) return undefined;
  return { line, message: { jsonrpc: "2.0", method: successorMethod(dialect, false), params: new WrappedParams(inner) } };
}

/** A wrapper's params `{method, params}` whose inner params are read from the inner message when read. */
class WrappedParams {
  readonly method: string;
  constructor(readonly inner: Inner) {
    this.method = inner.method;
  }
  get params(): Params {
    return this.inner.params;
  }
  toJSON(): Record<string, unknown> {
    return { method: this.method, params: this.inner.params };
  }
}

/** The wrapper's method in `dialect`; `isRequest` picks the sacp one. */
function successorMethod(dialect: Dialect, isRequest: boolean): string {
  if (dialect === "proxy") return "proxy/successor";
  if (dialect === "underscore") return "_proxy/successor";
  return isRequest ? "_proxy/successor/request" : "_proxy/successor/notification";
}

/** The wrapper carrying `inner` in `dialect`; `isRequest` picks the sacp method name. */
export function wrapSuccessor(dialect: Dialect, inner: Inner, isRequest: boolean): { method: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { method: inner.method };
  if (inner.params !== undefined) params.params = inner.params;
  // hop-local metadata: `_meta` in the proxy dialect, `meta` in the underscore one, none in sacp
  if (inner.meta !== undefined && dialect !== "sacp") params[dialect === "proxy" ? "_meta" : "meta"] = inner.meta;
  return { method: successorMethod(dialect, isRequest), params };
}

