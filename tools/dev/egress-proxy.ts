// Owns the sandbox's allow-domains proxy (`sandbox_allow_domains`, SPEC §3.8): an HTTP and CONNECT
// proxy the agent runs for one confined command, which reaches a host only when it matches a pattern
// (host and port), a name leads to no private address and a tunnel's TLS name is its host, and answers
// any other request with a 403 naming the host and the setting, remembering what it refused for the
// tool result. Does not decide where it listens (sandbox.ts binds it into the sandbox).
import { lookup } from "node:dns/promises";
import { BlockList, connect, createServer, isIP, type Server, type Socket } from "node:net";
import { crossedSuffix, DEFAULT_PORTS, type HostPattern, loadPublicSuffixes, matchHost, parseHostPattern } from "../../core/host-patterns.ts";
import { DEFAULT_LIMITS } from "../../core/limits.ts";
import { readClientHelloName } from "./tls-client-hello.ts";

/** Hop-by-hop headers the proxy does not pass on to the host. */
const HOP_HEADERS = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive"]);
/** How a request body is framed: the proxy writes these itself, from the framing it checked and reads
 *  (a fresh Content-Length, or `chunked` alone; `Trailer` goes, as the trailers do). */
const FRAMING_HEADERS = new Set(["content-length", "transfer-encoding", "trailer"]);

/** Whether `host` on `port` matches one of the patterns (core/host-patterns.ts; port 80 or 443 unless a
 *  pattern names one). A wildcard among them needs the suffix list loaded first (loadPublicSuffixes). */
export function hostAllowed(host: string, port: number, patterns: readonly string[]): boolean {
  return matchHost(host, port, patterns.map(readPattern)) === "allowed";
}

/** A pattern the config already read (and checked against the public suffixes). */
function readPattern(raw: string): HostPattern {
  const p = parseHostPattern(raw, false);
  if (typeof p === "string") throw new Error(`sandbox_allow_domains: ${JSON.stringify(raw)} ${p}`);
  return p;
}

/** Address ranges a host *name* may not lead to, by what they are. */
const NAME_REFUSED: readonly [kind: string, list: BlockList][] = (() => {
  const ranges: [string, [string, number, "ipv4" | "ipv6"][]][] = [
    ["this machine", [["127.0.0.0", 8, "ipv4"], ["0.0.0.0", 8, "ipv4"], ["::1", 128, "ipv6"], ["::", 128, "ipv6"]]],
    ["a private network", [["10.0.0.0", 8, "ipv4"], ["172.16.0.0", 12, "ipv4"], ["192.168.0.0", 16, "ipv4"], ["fc00::", 7, "ipv6"], ["fec0::", 10, "ipv6"]]],
    ["carrier-grade NAT", [["100.64.0.0", 10, "ipv4"]]],
    ["link-local", [["169.254.0.0", 16, "ipv4"], ["fe80::", 10, "ipv6"]]],
    ["multicast or reserved", [["224.0.0.0", 3, "ipv4"], ["ff00::", 8, "ipv6"]]],
  ];
  return ranges.map(([kind, subnets]) => {
    const list = new BlockList();
    for (const [net, prefix, type] of subnets) list.addSubnet(net, prefix, type);
    return [kind, list];
  });
})();

/**
 * What an address is when a host *name* may not lead there (this machine, a private network, CGNAT,
 * link-local with the cloud metadata service, IPv6 ULA; IPv4-mapped IPv6 forms of each), else
 * undefined. An allowed name pointing there would reach the host's own or its network's services
 * from inside the sandbox; allowing the address itself still works.
 */
export function nameRefusedAddress(address: string): string | undefined {
  const type = isIP(address) === 4 ? "ipv4" : isIP(address) === 6 ? "ipv6" : undefined;
  if (!type) return "not an address";
  return NAME_REFUSED.find(([, list]) => list.check(address, type))?.[0];
}

/** Resolves a name to the one address the proxy connects to (injectable for tests). */
export type Resolve = (host: string) => Promise<string>;
/** Opens the connection to a checked address (injectable for tests, which have no public host to reach). */
export type Dial = (address: string, port: number) => Socket;
const systemResolve: Resolve = async (host) => (await lookup(host)).address;
const systemDial: Dial = (address, port) => connect({ host: address, port });

/** Where to connect for an allowed host: an IP as given; a name resolved here (the address the check
 *  saw is the one connected to) and refused when it leads to this machine or a private network. */
async function resolveAllowed(host: string, resolve: Resolve): Promise<{ address: string } | { refused: string }> {
  if (isIP(host)) return { address: host };
  const address = await resolve(host);
  const kind = nameRefusedAddress(address);
  if (kind) {
    return { refused: `tendril sandbox: ${host} resolves to ${address} (${kind}), which the sandbox does not reach through a name: allow ${address} itself in sandbox_allow_domains if you mean it` };
  }
  return { address };
}

/** The refusal text: the host, the setting, and what it lets through. */
export function refusalText(host: string, patterns: readonly string[]): string {
  return `tendril sandbox: ${host} is not reachable from this command: sandbox_allow_domains lets through only ${patterns.join(", ")}`;
}

function suffixRefusalText(host: string, patterns: readonly string[]): string {
  const suffix = crossedSuffix(host);
  return `tendril sandbox: ${host} is not reachable from this command: it is a name registered under the public suffix ${suffix}, which a wildcard in sandbox_allow_domains (${patterns.join(", ")}) does not cover; name the host itself to allow it`;
}

function portRefusalText(host: string, port: number, patterns: readonly string[]): string {
  return `tendril sandbox: port ${port} of ${host} is not reachable from this command: sandbox_allow_domains lets through ports ${DEFAULT_PORTS.join(" and ")} unless a pattern names another (${host}:${port}); it has ${patterns.join(", ")}`;
}

export interface EgressProxy {
  /** Hosts refused so far, first refusal first, each once. */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  /** How names are resolved (default: the system resolver). */
  resolve?: Resolve;
  /** How a checked address is connected to (default: TCP to it). */
  dial?: Dial;
  /** SANDBOX_PROXY_HEAD_BYTES in force: a request head or TLS hello larger than this is refused. */
  maxHeadBytes?: number;
  /** SANDBOX_PROXY_HEAD_TIMEOUT_S in force, in ms: a client that sends no whole head within it is dropped. */
  headTimeoutMs?: number;
}

/** What one connection's handling needs. */
interface ProxyContext {
  readonly patterns: readonly string[];
  readonly parsed: readonly HostPattern[];
  readonly sockets: Set<Socket>;
  readonly onRefused: (host: string) => void;
  readonly resolve: Resolve;
  readonly dial: Dial;
  readonly maxHeadBytes: number;
  readonly headTimeoutMs: number;
}

/** Starts a proxy listening at `target` (a unix socket path, or a TCP port on 127.0.0.1 when a number).
 *  Throws when a pattern is not one (config.ts has refused those already). */
export async function startEgressProxy(target: string | number, patterns: readonly string[], opts: EgressProxyOptions = {}): Promise<EgressProxy & { port?: number }> {
  const refused: string[] = [];
  await loadPublicSuffixes(patterns);
  const ctx: ProxyContext = {
    patterns,
    parsed: patterns.map(readPattern),
    sockets: new Set<Socket>(),
    onRefused: (host) => {
      if (!refused.includes(host)) refused.push(host);
    },
    resolve: opts.resolve ?? systemResolve,
    dial: opts.dial ?? systemDial,
    maxHeadBytes: opts.maxHeadBytes ?? DEFAULT_LIMITS.SANDBOX_PROXY_HEAD_BYTES,
    headTimeoutMs: opts.headTimeoutMs ?? DEFAULT_LIMITS.SANDBOX_PROXY_HEAD_TIMEOUT_S * 1000,
  };
  const server: Server = createServer((client) => {
    ctx.sockets.add(client);
    client.on("close", () => ctx.sockets.delete(client));
    handle(client, ctx);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (typeof target === "number") server.listen(target, "127.0.0.1", resolve);
    else server.listen(target, resolve);
  });
  server.on("error", () => {});
  const addr = server.address();
  return {
    refused,
    ...(typeof addr === "object" && addr !== null ? { port: addr.port } : {}),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of ctx.sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Head {
  method: string;
  target: string;
  version: string;
  headers: [string, string][];
  /** Bytes after the head (a request body, or a TLS hello sent early). */
  rest: Buffer;
}

function parseHead(buf: Buffer, end: number): Head | undefined {
  const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
  const m = /^([A-Z]+) (\S+) (HTTP\/1\.[01])$/.exec(lines[0] ?? "");
  if (!m) return undefined;
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const i = line.indexOf(":");
    // A bare CR or LF inside a line: the host may read it as a line break (a header the check never saw).
    if (i <= 0 || /[\r\n]/.test(line)) return undefined;
    headers.push([line.slice(0, i).trim(), line.slice(i + 1).trim()]);
  }
  return { method: m[1]!, target: m[2]!, version: m[3]!, headers, rest: buf.subarray(end + 4) };
}

function answer(client: Socket, status: string, text: string): void {
  const body = `${text}\n`;
  client.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nX-Tendril-Sandbox: ${status.startsWith("403") ? "refused" : "error"}\r\n\r\n${body}`,
  );
}

/** `host:port` of a CONNECT target (`[v6]:port` too); undefined when it is not one. */
function authority(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/]+):(\d{1,5})$/.exec(target);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

function handle(client: Socket, ctx: ProxyContext): void {
  let buf = Buffer.alloc(0);
  client.setTimeout(ctx.headTimeoutMs, () => client.destroy());
  client.on("error", () => client.destroy());
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) {
      if (buf.length > ctx.maxHeadBytes) answer(client, "431 Request Header Fields Too Large", "tendril sandbox proxy: request head too large");
      return;
    }
    client.off("data", onData);
    client.pause(); // bytes after the head wait for the upstream (pipe resumes)
    client.setTimeout(0);
    const head = parseHead(buf, end);
    if (!head) return answer(client, "400 Bad Request", "tendril sandbox proxy: not an HTTP/1 proxy request");
    route(client, head, ctx);
  };
  client.on("data", onData);
}

/** Where a request goes: host, port, and the bytes to send first (a plain request's head is rewritten). */
interface Target {
  host: string;
  port: number;
  firstBytes: Buffer;
  /** A plain request: how many body bytes follow firstBytes (what comes after is not relayed, so a
   *  second request on the connection never reaches the host unchecked); "chunked": a chunked body,
   *  read chunk by chunk and written again in clean chunks (ChunkedBody). Undefined for a tunnel. */
  bodyLeft?: number | "chunked";
  /** Body bytes that came with the head (a chunked body's start). */
  early?: Buffer;
}

function target(head: Head): Target | string {
  if (head.method === "CONNECT") {
    const a = authority(head.target);
    if (!a) return `tendril sandbox proxy: CONNECT needs host:port, got ${head.target}`;
    return { ...a, firstBytes: head.rest };
  }
  let url: URL;
  try {
    url = new URL(head.target);
  } catch {
    return `tendril sandbox proxy: a proxied request needs an absolute http:// URL, got ${head.target}`;
  }
  if (url.protocol !== "http:") return `tendril sandbox proxy: only http:// is proxied in the clear (use CONNECT for ${url.protocol})`;
  // The host reads the Host header, not the URL the check saw: it is set to the URL's host. The
  // framing headers are the proxy's own too (below): the host reads the framing the proxy checked.
  const headers = head.headers.filter(([k]) => !HOP_HEADERS.has(k.toLowerCase()) && !FRAMING_HEADERS.has(k.toLowerCase()) && k.toLowerCase() !== "host");
  const fields = (name: string) => head.headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);
  // The framing the proxy checked is the framing the host reads: one Content-Length, or chunked alone.
  const lengths = fields("content-length");
  const codings = fields("transfer-encoding");
  if (lengths.length > 1) return "tendril sandbox proxy: more than one Content-Length";
  const length = lengths[0];
  if (length !== undefined && !/^\d{1,15}$/.test(length)) return `tendril sandbox proxy: Content-Length ${JSON.stringify(length)} is not a length`;
  if (codings.length > 1 || (codings[0] !== undefined && codings[0].toLowerCase() !== "chunked")) return `tendril sandbox proxy: Transfer-Encoding ${JSON.stringify(codings.join(", "))} is refused (only chunked)`;
  if (codings.length > 0 && length !== undefined) return "tendril sandbox proxy: both Content-Length and Transfer-Encoding";
  // An HTTP/1.0 host may not read chunks at all, and would take them for the next request.
  if (codings.length > 0 && head.version === "HTTP/1.0") return "tendril sandbox proxy: Transfer-Encoding in an HTTP/1.0 request";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port === "" ? 80 : Number(url.port);
  const headLines = (framing: string[]) =>
    Buffer.from([`${head.method} ${url.pathname}${url.search} ${head.version}`, `Host: ${url.host}`, ...headers.map(([k, v]) => `${k}: ${v}`), ...framing, "Connection: close", "", ""].join("\r\n"), "latin1");
  if (codings.length > 0) return { host, port, firstBytes: headLines(["Transfer-Encoding: chunked"]), bodyLeft: "chunked", early: head.rest };
  const body = Number(length ?? 0);
  const early = head.rest.subarray(0, body);
  return { host, port, firstBytes: Buffer.concat([headLines(length === undefined ? [] : [`Content-Length: ${body}`]), early]), bodyLeft: body - early.length };
}

function route(client: Socket, head: Head, ctx: ProxyContext): void {
  const t = target(head);
  if (typeof t === "string") return answer(client, "400 Bad Request", t);
  const { host, port } = t;
  const match = matchHost(host, port, ctx.parsed);
  if (match !== "allowed") {
    ctx.onRefused(match === "port" ? `${host}:${port}` : host);
    const why = match === "port" ? portRefusalText(host, port, ctx.patterns) : match === "suffix" ? suffixRefusalText(host, ctx.patterns) : refusalText(host, ctx.patterns);
    return answer(client, "403 Forbidden", why);
  }
  resolveAllowed(host, ctx.resolve).then(
    (r) => {
      if ("refused" in r) {
        ctx.onRefused(host);
        return answer(client, "403 Forbidden", r.refused);
      }
      relay(client, t, r.address, ctx);
    },
    (err: Error) => answer(client, "502 Bad Gateway", `tendril sandbox proxy: cannot resolve ${host}: ${err.message}`),
  );
}

function relay(client: Socket, t: Target, address: string, ctx: ProxyContext): void {
  const { host, port, firstBytes, bodyLeft } = t;
  const upstream = ctx.dial(address, port);
  ctx.sockets.add(upstream);
  let connected = false;
  upstream.on("close", () => {
    ctx.sockets.delete(upstream);
    // Ended, not destroyed: what the client has not taken yet of the answer still goes out (a slow
    // reader's last bytes), then the connection closes. Before connecting, the 502 answer ends it.
    if (connected) client.end();
  });
  client.on("close", () => upstream.destroy());
  upstream.on("error", (err) => {
    if (!connected) answer(client, "502 Bad Gateway", `tendril sandbox proxy: cannot reach ${host}:${port}: ${err.message}`);
    else client.destroy();
  });
  upstream.on("connect", () => {
    connected = true;
    const pipe = (first: Buffer) => {
      if (first.length > 0) upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
    };
    if (bodyLeft === "chunked") return relayChunked(client, upstream, firstBytes, t.early ?? Buffer.alloc(0), ctx.maxHeadBytes);
    if (bodyLeft !== undefined) return relayOne(client, upstream, firstBytes, bodyLeft);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    checkTunnelName(client, host, firstBytes, ctx).then((first) => {
      if (first) pipe(first);
      else upstream.destroy();
    });
  });
}

/** One plain request: its head and `bodyLeft` more body bytes go up; anything the client sends after
 *  (a pipelined request, whose Host no one checked) is read and dropped, and the connection ends with
 *  the answer (the host was sent `Connection: close`). Dropping is the simpler safe choice: reading
 *  what follows as a next request would need the whole check again for each one. */
function relayOne(client: Socket, upstream: Socket, first: Buffer, bodyLeft: number): void {
  upstream.write(first);
  upstream.pipe(client);
  let left = bodyLeft;
  client.on("data", (chunk: Buffer) => {
    if (left === 0) return;
    const part = chunk.subarray(0, left);
    left -= part.length;
    upstream.write(part);
  });
  client.resume();
}

/** A chunk size line this proxy reads: hex digits alone (no extension), at most 8 (a chunk under 4 GiB,
 *  a size no host's parser overflows on). */
const CHUNK_SIZE = /^[0-9a-fA-F]{1,8}$/;

/**
 * A chunked request body read as the proxy's own parser reads it and written again in clean chunks:
 * each size line hex digits alone (an extension, a bare LF, a size too long is refused), each chunk's
 * data followed by CRLF, the trailers dropped, and nothing after the last chunk. What the host parses
 * is then what the proxy parsed: a second request smuggled after the body, or inside a size line two
 * parsers read differently, never reaches it.
 */
export class ChunkedBody {
  #buf: Buffer = Buffer.alloc(0);
  #state: "size" | "data" | "data-end" | "trailer" | "done" = "size";
  #left = 0;
  /** SANDBOX_PROXY_HEAD_BYTES in force: the longest size or trailer line read. */
  readonly #maxLine: number;

  constructor(maxLineBytes: number = DEFAULT_LIMITS.SANDBOX_PROXY_HEAD_BYTES) {
    this.#maxLine = maxLineBytes;
  }

  /** The clean bytes for what `chunk` completes; a sentence naming what is wrong, else. */
  push(chunk: Buffer): Buffer | string {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      if (this.#state === "done") {
        this.#buf = Buffer.alloc(0); // what follows the body is not relayed
        break;
      }
      if (this.#state === "data") {
        if (this.#buf.length === 0) break;
        const part = this.#buf.subarray(0, this.#left);
        this.#buf = this.#buf.subarray(part.length);
        this.#left -= part.length;
        out.push(Buffer.from(`${part.length.toString(16)}\r\n`, "latin1"), part, Buffer.from("\r\n", "latin1"));
        if (this.#left === 0) this.#state = "data-end";
        continue;
      }
      const nl = this.#buf.indexOf("\n");
      if ((nl < 0 ? this.#buf.length : nl) > this.#maxLine) return "a chunk size or trailer line longer than the proxy reads";
      if (nl < 0) break;
      if (nl === 0 || this.#buf[nl - 1] !== 0x0d) return "a chunked body line that does not end with CRLF";
      const line = this.#buf.subarray(0, nl - 1).toString("latin1");
      this.#buf = this.#buf.subarray(nl + 1);
      if (this.#state === "data-end") {
        if (line !== "") return "chunk data longer than its size";
        this.#state = "size";
      } else if (this.#state === "size") {
        if (!CHUNK_SIZE.test(line)) return `chunk size ${JSON.stringify(line.slice(0, 40))} is not hex digits alone (extensions are refused)`;
        this.#left = Number.parseInt(line, 16);
        this.#state = this.#left === 0 ? "trailer" : "data";
      } else if (line === "") {
        out.push(Buffer.from("0\r\n\r\n", "latin1"));
        this.#state = "done";
      } else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(line)) {
        return "a malformed trailer line";
      }
    }
    return Buffer.concat(out);
  }

  get done(): boolean {
    return this.#state === "done";
  }
}

/** One plain request with a chunked body: its head goes up, the body re-framed (ChunkedBody); a body
 *  the proxy cannot read ends both connections with a 400, and nothing after the body goes up. */
function relayChunked(client: Socket, upstream: Socket, head: Buffer, early: Buffer, maxLineBytes: number): void {
  const body = new ChunkedBody(maxLineBytes);
  let answered = false;
  upstream.on("data", () => (answered = true));
  upstream.write(head);
  upstream.pipe(client);
  const take = (chunk: Buffer) => {
    if (body.done) return;
    const clean = body.push(chunk);
    if (typeof clean === "string") {
      client.off("data", take);
      upstream.unpipe(client);
      upstream.destroy();
      if (answered) client.destroy();
      else answer(client, "400 Bad Request", `tendril sandbox proxy: ${clean}`);
      return;
    }
    if (clean.length > 0) upstream.write(clean);
  };
  if (early.length > 0) take(early);
  client.on("data", take);
  client.resume();
}

/**
 * The first bytes of a tunnel, once they show it goes where the CONNECT said: a TLS ClientHello must
 * name the CONNECT host (a tunnel to a name must open with one; to an address, any server name is a
 * mismatch). Undefined, with the connection closed and the name refused, otherwise.
 */
function checkTunnelName(client: Socket, host: string, early: Buffer, ctx: ProxyContext): Promise<Buffer | undefined> {
  const want = host.toLowerCase().replace(/\.$/, "");
  const named = isIP(host) === 0;
  return new Promise((resolve) => {
    let buf = early;
    const finish = (ok: boolean, refusedAs?: string) => {
      client.off("data", onData);
      client.setTimeout(0);
      if (ok) return resolve(buf);
      if (refusedAs) ctx.onRefused(refusedAs);
      client.destroy();
      resolve(undefined);
    };
    const judge = (): boolean => {
      const hello = readClientHelloName(buf);
      if (hello.kind === "partial") {
        if (buf.length > ctx.maxHeadBytes) finish(false, `${host} (a TLS hello larger than the proxy reads)`);
        return buf.length > ctx.maxHeadBytes;
      }
      client.pause();
      if (hello.kind === "not-tls") finish(!named, `${host} (a tunnel to a name that does not open with TLS)`);
      else if (hello.kind === "malformed") finish(false, `${host} (a malformed TLS hello: ${hello.why})`);
      else {
        const name = hello.name?.toLowerCase().replace(/\.$/, "");
        finish(named ? name === want : name === undefined, `${hello.name ?? "(no server name)"} (the TLS server name in a tunnel to ${host})`);
      }
      return true;
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      judge();
    };
    if (judge()) return;
    client.setTimeout(ctx.headTimeoutMs, () => finish(false));
    client.on("data", onData);
    client.resume();
  });
}
