// The allow-domains proxy in process (SPEC §3.8, issue A8): Host rewriting, the TLS server name of a
// tunnel, ports, and the addresses a name may not lead to. Names resolve through an injected resolver
// to documentation addresses (the real address check runs on them); the dial is redirected to a
// loopback stand-in for the host, since no test reaches a public one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect as netConnect, createServer, type Server, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ChunkedBody, nameRefusedAddress, startEgressProxy, type Resolve } from "./egress-proxy.ts";
import { readClientHelloName } from "./tls-client-hello.ts";

/** The stand-in for every allowed host: records what arrives and answers plain HTTP with its Host header. */
let upstream: Server;
let upstreamPort = 0;
const received: Buffer[] = [];
beforeAll(async () => {
  upstream = createServer((s) => {
    let text = "";
    s.on("data", (b: Buffer) => {
      received.push(b);
      text += b.toString("latin1");
      // one plain request, whole (head and Content-Length body, or chunked body to its last chunk):
      // answered with its Host header
      const end = text.indexOf("\r\n\r\n");
      if (!/^[A-Z]+ /.test(text) || end < 0) return;
      if (text.length - end - 4 < Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0)) return;
      if (/\r\ntransfer-encoding: chunked\r\n/i.test(text.slice(0, end + 2)) && !/(^|\r\n)0\r\n([^\r\n]+\r\n)*\r\n/.test(text.slice(end + 4))) return;
      const host = /\r\nhost: ([^\r]*)/i.exec(text)?.[1];
      s.end(`HTTP/1.1 200 OK\r\nContent-Length: ${`host=${host}`.length}\r\nConnection: close\r\n\r\nhost=${host}`);
    });
    s.on("error", () => {});
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamPort = (upstream.address() as { port: number }).port;
});
afterAll(() => upstream.close());

/** A public documentation address (TEST-NET-3): what every test name resolves to unless a test says otherwise. */
const PUBLIC = "203.0.113.7";
const dials: string[] = [];
const dial = (address: string, port: number): Socket => {
  dials.push(`${address}:${port}`);
  return netConnect(upstreamPort, "127.0.0.1");
};

async function withProxy(patterns: string[], fn: (port: number, refused: readonly string[]) => Promise<void>, resolve: Resolve = async () => PUBLIC) {
  received.length = 0;
  dials.length = 0;
  const proxy = await startEgressProxy(0, patterns, { resolve, dial });
  try {
    await fn(proxy.port!, proxy.refused);
  } finally {
    await proxy.close();
  }
}

/** Sends `parts` (20 ms apart, so each arrives as its own read) and returns all the proxy sent back. */
async function exchange(port: number, ...parts: string[]): Promise<string> {
  const s = netConnect(port, "127.0.0.1");
  let got = "";
  s.on("data", (b) => (got += b.toString("latin1")));
  s.on("error", () => {});
  const closed = new Promise((r) => s.once("close", r));
  for (const [i, part] of parts.entries()) {
    if (i > 0) await Bun.sleep(20);
    if (!s.destroyed) s.write(part);
  }
  await closed;
  return got;
}

/** Opens a CONNECT tunnel and starts a real TLS handshake in it asking for `servername`; resolves when the proxy closes it or the host got bytes. */
async function tlsThrough(port: number, target: string, servername: string): Promise<{ status: string; closed: boolean }> {
  const s = netConnect(port, "127.0.0.1");
  s.on("error", () => {});
  const status = await new Promise<string>((resolve) => {
    let got = "";
    const onData = (b: Buffer) => {
      got += b.toString("latin1");
      if (got.includes("\r\n\r\n")) {
        s.off("data", onData);
        resolve(got.split("\r\n")[0]!);
      }
    };
    s.on("data", onData);
    s.once("close", () => resolve(got.split("\r\n")[0] ?? ""));
    s.write(`CONNECT ${target} HTTP/1.1\r\n\r\n`);
  });
  if (!status.includes("200")) return { status, closed: true };
  const tls = tlsConnect({ socket: s, servername, rejectUnauthorized: false });
  tls.on("error", () => {});
  const closed = await new Promise<boolean>((resolve) => {
    const t0 = Date.now();
    const poll = setInterval(() => {
      if (received.length > 0 || Date.now() - t0 > 5000) {
        clearInterval(poll);
        resolve(false);
      }
    }, 10);
    s.once("close", () => {
      clearInterval(poll);
      resolve(true);
    });
  });
  s.destroy();
  return { status, closed };
}

describe("A8: the allow-domains proxy", () => {
  test("A8: the Host header of a plain HTTP request is rewritten to the target host", async () => {
    await withProxy(["api.allowed.test"], async (port) => {
      const got = await exchange(port, "GET http://api.allowed.test/x HTTP/1.1\r\nHost: evil.test\r\nhost: evil2.test\r\n\r\n");
      expect(got).toStartWith("HTTP/1.1 200 OK");
      expect(got).toEndWith("host=api.allowed.test");
      expect(Buffer.concat(received).toString("latin1").match(/^host:/gim)).toHaveLength(1);
      expect(dials).toEqual([`${PUBLIC}:80`]);
    });
  });

  test("A8: a plain connection carries one request: its body of Content-Length bytes goes up, a pipelined second request (its Host unchecked) never does", async () => {
    await withProxy(["api.allowed.test"], async (port) => {
      const got = await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\nHost: api.allowed.test\r\nContent-Length: 5\r\n\r\nhelloGET http://api.allowed.test/second HTTP/1.1\r\nHost: evil.test\r\n\r\n");
      const sent = Buffer.concat(received).toString("latin1");
      expect(sent).toStartWith("POST /up HTTP/1.1\r\nHost: api.allowed.test\r\n");
      expect(sent).toEndWith("\r\n\r\nhello");
      expect(sent).not.toContain("evil.test");
      expect(got).toEndWith("host=api.allowed.test");
      expect(await exchange(port, "POST http://api.allowed.test/x HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n")).toStartWith("HTTP/1.1 400 Bad Request");
      // the body arriving later, with the next request right behind it
      received.length = 0;
      // a smuggled request line to a host the patterns do not name, the body arriving later
      const late = await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\nContent-Length: 5\r\n\r\nhe", "lloGET http://forbidden.test/ HTTP/1.1\r\nHost: forbidden.test\r\n\r\n");
      expect(late).toEndWith("host=api.allowed.test");
      expect(Buffer.concat(received).toString("latin1")).toEndWith("\r\n\r\nhello");
      expect(Buffer.concat(received).toString("latin1")).not.toContain("forbidden.test");
    });
  });

  test("regression: a duplicate Content-Length, a bare-LF header line and a Transfer-Encoding other than chunked were relayed; each is refused", async () => {
    await withProxy(["api.allowed.test"], async (port) => {
      const refused = [
        "POST http://api.allowed.test/x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 50\r\n\r\nhello",
        "GET http://api.allowed.test/x HTTP/1.1\r\nX-A: a\nHost: evil.test\r\n\r\n",
        "POST http://api.allowed.test/x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST http://api.allowed.test/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
      ];
      for (const request of refused) expect({ request, answer: (await exchange(port, request)).slice(0, 24) }).toEqual({ request, answer: "HTTP/1.1 400 Bad Request" });
      expect(Buffer.concat(received).toString("latin1")).not.toContain("evil.test");
    });
  });

  test("regression: a chunked body was relayed as sent; it is re-framed: a request smuggled after its last chunk never reaches the host, a chunk extension is refused with 400", async () => {
    await withProxy(["api.allowed.test"], async (port) => {
      received.length = 0;
      await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET http://api.allowed.test/second HTTP/1.1\r\nHost: evil.test\r\n\r\n");
      const sent = Buffer.concat(received).toString("latin1");
      expect(sent).toStartWith("POST /up HTTP/1.1\r\nHost: api.allowed.test\r\n");
      expect(sent).not.toContain("evil.test");
      expect(sent).not.toContain("/second");
      const ext = await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\n\r\n");
      expect(ext).toStartWith("HTTP/1.1 400 Bad Request");
      expect(ext).toContain("extensions are refused");
    });
  });

  test("a good chunked body reaches the host whole, in chunks the proxy wrote: sizes in plain hex, no trailer, whatever pieces it came in", async () => {
    await withProxy(["api.allowed.test"], async (port) => {
      const got = await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n005\r\nhel", "lo\r\nA\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\n");
      expect(got).toEndWith("host=api.allowed.test");
      const sent = Buffer.concat(received).toString("latin1");
      const end = sent.indexOf("\r\n\r\n");
      expect(sent.slice(0, end + 2)).toContain("\r\nTransfer-Encoding: chunked\r\n");
      expect(sent.slice(0, end + 2)).not.toContain("Trailer");
      // read strictly: a size is lower-case hex without leading zeros, the last chunk has no trailer
      let body = sent.slice(end + 4);
      let data = "";
      for (;;) {
        const m = /^(0|[1-9a-f][0-9a-f]*)\r\n/.exec(body);
        if (!m) throw new Error(`not a clean chunk: ${JSON.stringify(body.slice(0, 20))}`);
        const size = Number.parseInt(m[1]!, 16);
        body = body.slice(m[0].length);
        if (size === 0) break;
        expect(body.slice(size, size + 2)).toBe("\r\n");
        data += body.slice(0, size);
        body = body.slice(size + 2);
      }
      expect({ data, rest: body }).toEqual({ data: "hello0123456789", rest: "\r\n" });
    });
  });

  test("regression: the framing headers went up as the client wrote them; the proxy writes its own (a fresh Content-Length, chunked alone), and refuses chunks in an HTTP/1.0 request", async () => {
    await withProxy(["api.allowed.test"], async (port) => {
      expect(await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\ncontent-length: 005\r\n\r\nhello")).toEndWith("host=api.allowed.test");
      const sent = Buffer.concat(received).toString("latin1");
      expect(sent).toContain("\r\nContent-Length: 5\r\n");
      expect(sent).not.toContain("005");
      received.length = 0;
      expect(await exchange(port, "POST http://api.allowed.test/up HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")).toEndWith("host=api.allowed.test");
      expect(Buffer.concat(received).toString("latin1").match(/^transfer-encoding:.*$/gim)).toEqual(["Transfer-Encoding: chunked"]);
      received.length = 0;
      const old = await exchange(port, "POST http://api.allowed.test/up HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
      expect(old).toStartWith("HTTP/1.1 400 Bad Request");
      expect(old).toContain("Transfer-Encoding in an HTTP/1.0 request");
      expect(received).toEqual([]);
    });
  });

  test("A8: a CONNECT whose TLS server name is not the CONNECT host is refused; the matching name goes through", async () => {
    await withProxy(["allowed.test"], async (port, refused) => {
      const bad = await tlsThrough(port, "allowed.test:443", "evil.test");
      expect(bad).toEqual({ status: "HTTP/1.1 200 Connection Established", closed: true });
      expect(received).toEqual([]);
      expect(refused).toEqual(["evil.test (the TLS server name in a tunnel to allowed.test)"]);
      const good = await tlsThrough(port, "allowed.test:443", "Allowed.test");
      expect(good.closed).toBe(false);
      expect(received[0]![0]).toBe(0x16); // the hello reached the host
      // A tunnel to a name that does not open with TLS carries no name to check: refused.
      received.length = 0;
      expect(await exchange(port, "CONNECT allowed.test:443 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")).toBe("HTTP/1.1 200 Connection Established\r\n\r\n");
      expect(received).toEqual([]);
      expect(refused).toContain("allowed.test (a tunnel to a name that does not open with TLS)");
    });
  });

  test("A8: ports 80 and 443 only, unless a pattern names the port", async () => {
    await withProxy(["allowed.test", "*.other.test:8443"], async (port, refused) => {
      const got = await exchange(port, "CONNECT allowed.test:8080 HTTP/1.1\r\n\r\n");
      expect(got).toStartWith("HTTP/1.1 403 Forbidden");
      expect(got).toContain("port 8080 of allowed.test is not reachable from this command: sandbox_allow_domains lets through ports 80 and 443 unless a pattern names another (allowed.test:8080)");
      expect(await exchange(port, "GET http://allowed.test:22/ HTTP/1.1\r\n\r\n")).toStartWith("HTTP/1.1 403 Forbidden");
      expect(await exchange(port, "GET http://a.other.test/ HTTP/1.1\r\n\r\n")).toStartWith("HTTP/1.1 403 Forbidden");
      expect(refused).toEqual(["allowed.test:8080", "allowed.test:22", "a.other.test:80"]);
      expect(dials).toEqual([]);
      expect(await exchange(port, "GET http://a.other.test:8443/ HTTP/1.1\r\n\r\n")).toEndWith("host=a.other.test:8443");
      expect(await exchange(port, "GET http://allowed.test:443/ HTTP/1.1\r\n\r\n")).toEndWith("host=allowed.test:443");
      expect(dials).toEqual([`${PUBLIC}:8443`, `${PUBLIC}:443`]);
    });
  });

  test("A8: a name resolving to loopback, private, CGNAT, link-local, ULA or an IPv4-mapped form of them is refused, never dialled", async () => {
    const refusedAddrs = ["127.0.0.1", "0.0.0.0", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.10", "100.64.0.1", "100.127.255.254", "169.254.169.254", "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:a9fe:a9fe", "::ffff:100.64.1.1", "224.0.0.1"];
    expect(refusedAddrs.filter((a) => nameRefusedAddress(a) === undefined)).toEqual([]);
    const open = ["8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2001:db8::1", "2606:4700::1111", "::ffff:8.8.8.8", PUBLIC];
    expect(open.filter((a) => nameRefusedAddress(a) !== undefined)).toEqual([]);
    expect(["10.0.0.1", "100.64.0.1", "fd00::1", "::ffff:192.168.1.1"].map(nameRefusedAddress)).toEqual(["a private network", "carrier-grade NAT", "a private network", "a private network"]);
    for (const address of ["10.0.0.5", "100.100.100.200", "fd00::5", "::ffff:169.254.169.254"]) {
      await withProxy(["inner.test"], async (port, refused) => {
        const got = await exchange(port, "CONNECT inner.test:443 HTTP/1.1\r\n\r\n");
        expect(got).toStartWith("HTTP/1.1 403 Forbidden");
        expect(got).toContain(`inner.test resolves to ${address} (`);
        expect(refused).toEqual(["inner.test"]);
        expect(dials).toEqual([]);
      }, async () => address);
    }
  });
});

test("A8: the ClientHello reader finds the server name of a real TLS hello, even split into pieces", async () => {
  const hello = await new Promise<Buffer>((resolve) => {
    const srv = createServer((s) => s.once("data", (b: Buffer) => (resolve(b), s.destroy(), srv.close())));
    srv.listen(0, "127.0.0.1", () => {
      const t = tlsConnect({ host: "127.0.0.1", port: (srv.address() as { port: number }).port, servername: "registry.npmjs.org" });
      t.on("error", () => {});
    });
  });
  expect(readClientHelloName(hello)).toEqual({ kind: "hello", name: "registry.npmjs.org" });
  expect(readClientHelloName(hello.subarray(0, 3)).kind).toBe("partial");
  expect(readClientHelloName(hello.subarray(0, hello.length - 1)).kind).toBe("partial");
  expect(readClientHelloName(Buffer.from("GET / HTTP/1.1\r\n")).kind).toBe("not-tls");
  // The same hello carried in two records.
  const body = hello.subarray(5);
  const rec = (b: Buffer) => Buffer.concat([Buffer.from([0x16, 3, 1, b.length >> 8, b.length & 255]), b]);
  expect(readClientHelloName(Buffer.concat([rec(body.subarray(0, 40)), rec(body.subarray(40))]))).toEqual({ kind: "hello", name: "registry.npmjs.org" });
});

test("a large answer reaches a slow reader whole: the host closing after it does not cut what the proxy still holds", async () => {
  const size = 8 * 1024 * 1024;
  const big = createServer((s) => {
    let head = "";
    s.on("data", (b: Buffer) => {
      head += b.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`);
      s.end(Buffer.alloc(size, 0x61));
    });
    s.on("error", () => {});
  });
  await new Promise<void>((r) => big.listen(0, "127.0.0.1", r));
  const proxy = await startEgressProxy(0, ["example.com"], { resolve: async () => PUBLIC, dial: () => netConnect((big.address() as { port: number }).port, "127.0.0.1") });
  try {
    const s = netConnect(proxy.port!, "127.0.0.1");
    let body = -1;
    let got = "";
    s.on("data", (b: Buffer) => {
      if (body < 0) {
        got += b.toString("latin1");
        const end = got.indexOf("\r\n\r\n");
        if (end >= 0) body = got.length - end - 4;
      } else body += b.length;
      // A reader slower than the host: the proxy holds what it has not taken yet.
      s.pause();
      setTimeout(() => s.resume(), 10);
    });
    s.on("error", () => {});
    const closed = new Promise((r) => s.once("close", r));
    s.write("GET http://example.com/big HTTP/1.1\r\nHost: example.com\r\n\r\n");
    await closed;
    expect(body).toBe(size);
  } finally {
    await proxy.close();
    big.close();
  }
});

test("SANDBOX_PROXY_HEAD_BYTES and SANDBOX_PROXY_HEAD_TIMEOUT_S reach the proxy: a head over the bound is refused with 431, a silent client is dropped in time", async () => {
  const proxy = await startEgressProxy(0, ["example.com"], { resolve: async () => PUBLIC, dial, maxHeadBytes: 512, headTimeoutMs: 200 });
  try {
    const big = await exchange(proxy.port!, `GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nX-Pad: ${"a".repeat(1024)}`);
    expect(big.split("\r\n")[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    const started = Date.now();
    const silent = await exchange(proxy.port!, "GET http://example.com/ HTTP/1.1\r\n");
    expect(silent).toBe("");
    expect(Date.now() - started).toBeLessThan(5_000); // the default would hold it for 30 s
  } finally {
    await proxy.close();
  }
});

test("ChunkedBody: clean chunks out, whatever the pieces; nothing after the last chunk; trailers dropped; what two parsers could read apart is refused", () => {
  const run = (...parts: string[]) => {
    const body = new ChunkedBody();
    let out = "";
    for (const p of parts) {
      const r = body.push(Buffer.from(p, "latin1"));
      if (typeof r === "string") return `refused: ${r}`;
      out += r.toString("latin1");
    }
    return out;
  };
  expect(run("5\r\nhello\r\n0\r\n\r\nGET /evil HTTP/1.1\r\n\r\n")).toBe("5\r\nhello\r\n0\r\n\r\n");
  expect(run("5\r\nhe", "llo\r", "\n0\r\n", "\r\n", "more")).toBe("2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n");
  expect(run("A\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\n")).toBe("a\r\n0123456789\r\n0\r\n\r\n");
  for (const bad of ["5;x=y\r\nhello\r\n", "5\nhello\r\n", "+5\r\nhello\r\n", "0x5\r\nhello\r\n", "123456789\r\n", "3\r\nhello\r\n", "0\r\nnot a header\r\n\r\n", " 5\r\nhello\r\n"]) {
    expect({ bad, r: run(bad).startsWith("refused: ") }).toEqual({ bad, r: true });
  }
  // a size or trailer line longer than SANDBOX_PROXY_HEAD_BYTES in force
  const bounded = new ChunkedBody(512);
  expect(bounded.push(Buffer.from("f".repeat(600), "latin1"))).toBe("a chunk size or trailer line longer than the proxy reads");
  expect(new ChunkedBody(512).push(Buffer.from(`5\r\nhello\r\n0\r\nX-Pad: ${"a".repeat(600)}\r\n\r\n`, "latin1"))).toBe("a chunk size or trailer line longer than the proxy reads");
  expect(new ChunkedBody(512).push(Buffer.from(`5\r\nhello\r\n0\r\nX-Pad: ${"a".repeat(400)}\r\n\r\n`, "latin1"))).toEqual(Buffer.from("5\r\nhello\r\n0\r\n\r\n", "latin1"));
});
