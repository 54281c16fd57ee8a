// Owns the sandbox's allow-domains proxy (`sandbox_allow_domains`, SPEC §3.8): an HTTP and CONNECT
// proxy the agent runs for one confined command, which reaches a host only when it matches a pattern
// and answers any other request with a 403 naming the host and the setting, remembering what it
// refused for the tool result. Does not decide where it listens (sandbox.ts binds it into the sandbox).
import { lookup } from "node:dns/promises";
import { connect, createServer, isIP, type Server, type Socket } from "node:net";

/** A request head larger than this is refused (no legitimate proxy request comes close). */
const MAX_HEAD_BYTES = 64 * 1024;
/** A client that sends no complete request head within this is dropped. */
const HEAD_TIMEOUT_MS = 30_000;
/** Hop-by-hop headers the proxy does not pass on to the host. */
const HOP_HEADERS = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive"]);

/** Whether `host` matches one of the patterns: `example.com` exactly, `*.example.com` any subdomain of it. */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return patterns.some((p) => (p.startsWith("*.") ? h.endsWith(p.slice(1)) : h === p));
}

/**
 * Addresses a host *name* may not lead to: this machine (loopback, unspecified) and link-local (the
 * cloud metadata service at 169.254.169.254). An allowed name pointing there would reach the host's own
 * services from inside the sandbox; allowing the address itself still works.
 */
export function hostOnlyAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, "");
  if (isIP(a) === 4) return /^(127\.|0\.|169\.254\.)/.test(a);
  return a === "::1" || a === "::" || /^fe[89ab]/.test(a);
}

/** Where to connect for an allowed host: an IP as given; a name resolved here (the address the check
 *  saw is the one connected to) and refused when it leads to this machine or link-local. */
async function resolveAllowed(host: string): Promise<{ address: string } | { refused: string }> {
  if (isIP(host)) return { address: host };
  const { address } = await lookup(host);
  if (hostOnlyAddress(address)) {
    return { refused: `tendril sandbox: ${host} resolves to ${address}, this machine or link-local, which the sandbox does not reach through a name: allow ${address} itself in sandbox_allow_domains if you mean it` };
  }
  return { address };
}

/** The refusal text: the host, the setting, and what it lets through. */
export function refusalText(host: string, patterns: readonly string[]): string {
  return `tendril sandbox: ${host} is not reachable from this command: sandbox_allow_domains lets through only ${patterns.join(", ")}`;
}

export interface EgressProxy {
  /** Hosts refused so far, first refusal first, each once. */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

/** Starts a proxy listening at `target` (a unix socket path, or a TCP port on 127.0.0.1 when a number). */
export async function startEgressProxy(target: string | number, patterns: readonly string[]): Promise<EgressProxy & { port?: number }> {
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    handle(client, patterns, sockets, (host) => {
      if (!refused.includes(host)) refused.push(host);
    });
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
        for (const s of sockets) s.destroy();
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
    if (i <= 0) return undefined;
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

function handle(client: Socket, patterns: readonly string[], sockets: Set<Socket>, onRefused: (host: string) => void): void {
  let buf = Buffer.alloc(0);
  client.setTimeout(HEAD_TIMEOUT_MS, () => client.destroy());
  client.on("error", () => client.destroy());
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) {
      if (buf.length > MAX_HEAD_BYTES) answer(client, "431 Request Header Fields Too Large", "tendril sandbox proxy: request head too large");
      return;
    }
    client.off("data", onData);
    client.pause(); // bytes after the head wait for the upstream (pipe resumes)
    client.setTimeout(0);
    const head = parseHead(buf, end);
    if (!head) return answer(client, "400 Bad Request", "tendril sandbox proxy: not an HTTP/1 proxy request");
    route(client, head, patterns, sockets, onRefused);
  };
  client.on("data", onData);
}

function route(client: Socket, head: Head, patterns: readonly string[], sockets: Set<Socket>, onRefused: (host: string) => void): void {
  let host: string;
  let port: number;
  let firstBytes: Buffer;
  if (head.method === "CONNECT") {
    const a = authority(head.target);
    if (!a) return answer(client, "400 Bad Request", `tendril sandbox proxy: CONNECT needs host:port, got ${head.target}`);
    ({ host, port } = a);
    firstBytes = head.rest;
  } else {
    let url: URL;
    try {
      url = new URL(head.target);
    } catch {
      return answer(client, "400 Bad Request", `tendril sandbox proxy: a proxied request needs an absolute http:// URL, got ${head.target}`);
    }
    if (url.protocol !== "http:") return answer(client, "400 Bad Request", `tendril sandbox proxy: only http:// is proxied in the clear (use CONNECT for ${url.protocol})`);
    host = url.hostname.replace(/^\[|\]$/g, "");
    port = url.port === "" ? 80 : Number(url.port);
    const headers = head.headers.filter(([k]) => !HOP_HEADERS.has(k.toLowerCase()));
    const lines = [`${head.method} ${url.pathname}${url.search} ${head.version}`, ...headers.map(([k, v]) => `${k}: ${v}`), "Connection: close", "", ""];
    firstBytes = Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), head.rest]);
  }
  if (!hostAllowed(host, patterns)) {
    onRefused(host);
    return answer(client, "403 Forbidden", refusalText(host, patterns));
  }
  resolveAllowed(host).then(
    (r) => {
      if ("refused" in r) {
        onRefused(host);
        return answer(client, "403 Forbidden", r.refused);
      }
      relay(client, head, r.address, host, port, firstBytes, sockets);
    },
    (err: Error) => answer(client, "502 Bad Gateway", `tendril sandbox proxy: cannot resolve ${host}: ${err.message}`),
  );
}

function relay(client: Socket, head: Head, address: string, host: string, port: number, firstBytes: Buffer, sockets: Set<Socket>): void {
  const upstream = connect({ host: address, port });
  sockets.add(upstream);
  let connected = false;
  upstream.on("close", () => {
    sockets.delete(upstream);
    if (connected) client.destroy(); // before that, the 502 answer ends the client
  });
  client.on("close", () => upstream.destroy());
  upstream.on("error", (err) => {
    if (!connected) answer(client, "502 Bad Gateway", `tendril sandbox proxy: cannot reach ${host}:${port}: ${err.message}`);
    else client.destroy();
  });
  upstream.on("connect", () => {
    connected = true;
    if (head.method === "CONNECT") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (firstBytes.length > 0) upstream.write(firstBytes);
    client.pipe(upstream);
    upstream.pipe(client);
  });
}
