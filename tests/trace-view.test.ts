// `tendril conductor trace FILE --html OUT` and `--serve` through the built binary, looked at in a real
// headless browser (Debian `chromium` driven by playwright-core): lanes, arrows, a click's JSON, the
// filters, hostile strings that stay text, the live page following a growing trace (a real chain's),
// and the bad inputs. The browser tests skip, saying why, only when chromium is not on PATH.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { BIN, ROOT, runBin } from "./binary.ts";
import { DEFAULT_LIMITS } from "../core/limits.ts";
import { embedJson, tracePage } from "../core/conductor/trace-view.ts";
import { stepsOf } from "../core/conductor/trace-steps.ts";
import { LineSplitter, parseTraceLine, TraceLineError } from "../core/conductor/trace-follow.ts";
import type { TraceRecord } from "../core/conductor/trace.ts";
import { spawnRawMode, type RawAgent } from "./raw-harness.ts";
import { waitFor } from "./fake-mcp-helpers.ts";

const CHROMIUM = Bun.which("chromium");
if (!CHROMIUM) console.warn("tests/trace-view.test.ts: chromium (Debian package chromium) is not on PATH: the browser tests are skipped");

/** Every wait in a page: a few hundred ms on an idle machine, 5x headroom and more on a loaded one. */
const PAGE_WAIT_MS = 10_000;
const FIXTURES = join(ROOT, "tests", "fixtures");
const RAW_PROXY = `${process.execPath} ${join(FIXTURES, "raw-proxy.ts")}`;
const BURST_AGENT = `${process.execPath} ${join(FIXTURES, "burst-agent.ts")}`;
const HOSTILE = `</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><!--`;

const work = mkdtempSync(join(tmpdir(), "tendril-trace-view-"));
const children = new Set<ChildProcess>();
const raws: RawAgent[] = [];
let browser: Browser | undefined;
let context: BrowserContext | undefined;

// Whatever ends this process, the viewers it started end with it (the browser dies with its pipe).
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
afterEach(async () => {
  await context?.close().catch(() => {});
  context = undefined;
  for (const c of children) c.kill("SIGKILL");
  children.clear();
  for (const r of raws.splice(0)) r.kill();
});
afterAll(async () => {
  await browser?.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const rec = (t: number, hop: TraceRecord["hop"], dir: TraceRecord["dir"], message: unknown) => JSON.stringify({ t, hop, dir, message }) + "\n";
const prompt = (id: number, sessionId: string, text: string) => ({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text }] } });
const update = (sessionId: string, text: string) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } } });

/** A two-component trace with two sessions and hostile strings in a component name, a method and a text. */
function sampleTrace(): string {
  return (
    JSON.stringify({ components: ["raw-proxy.ts", `agent${HOSTILE}`] }) +
    "\n" +
    rec(1, "client", "in", prompt(5, "sess-a", `hello ${HOSTILE}`)) +
    rec(1.1, 0, "out", prompt(0, "sess-a", `hello ${HOSTILE}`)) +
    rec(1.5, 0, "in", { jsonrpc: "2.0", id: 3, method: "proxy/successor", params: { method: "session/prompt", params: prompt(0, "sess-a", "hi").params } }) +
    rec(1.6, 1, "out", prompt(0, "sess-a", "hi")) +
    rec(2, 1, "in", update("sess-a", "yo")) +
    rec(2.1, 0, "out", { jsonrpc: "2.0", method: "proxy/successor", params: { method: "session/update", params: update("sess-a", "yo").params } }) +
    rec(2.5, 0, "in", update("sess-b", "other session")) +
    rec(2.6, "client", "out", update("sess-b", "other session")) +
    rec(2.7, 0, "in", { jsonrpc: "2.0", method: `x/${HOSTILE}`, params: { sessionId: "sess-b" } }) +
    rec(2.8, "client", "out", { jsonrpc: "2.0", method: `x/${HOSTILE}`, params: { sessionId: "sess-b" } }) +
    rec(3, 1, "in", { jsonrpc: "2.0", id: 0, result: { stopReason: "end_turn" } }) +
    rec(3.1, 0, "out", { jsonrpc: "2.0", id: 3, result: { stopReason: "end_turn" } }) +
    rec(3.5, 0, "in", { jsonrpc: "2.0", id: 0, result: { stopReason: "end_turn" } }) +
    rec(3.6, "client", "out", { jsonrpc: "2.0", id: 5, result: { stopReason: "end_turn" } })
  );
}

function writeTrace(name: string, text: string): string {
  const file = join(work, name);
  writeFileSync(file, text);
  return file;
}

interface Viewer {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited(timeoutMs: number): Promise<number | string>;
}

/** `tendril conductor trace FILE --serve …`; resolves with the URL it printed. */
async function startViewer(file: string, args: string[] = []): Promise<Viewer> {
  const child = spawn(BIN, ["conductor", "trace", file, "--serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  let err = "";
  let exit: number | string | undefined;
  child.stderr!.setEncoding("utf8").on("data", (c: string) => void (err += c));
  const ended = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve((exit = code ?? signal ?? "unknown"))));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within ${PAGE_WAIT_MS} ms; stderr: ${err}`)), PAGE_WAIT_MS);
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    void ended.then((code) => {
      clearTimeout(timer);
      reject(new Error(`viewer exited (${code}) before printing its URL; stderr: ${err}`));
    });
  });
  return {
    child,
    url,
    stderr: () => err,
    exited: (timeoutMs) =>
      exit !== undefined
        ? Promise.resolve(exit)
        : Promise.race([ended, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`viewer still running after ${timeoutMs} ms`)), timeoutMs))]),
  };
}

async function openPage(url: string): Promise<{ page: Page; errors: string[] }> {
  // --no-sandbox: CI runs as root in a container, where chromium's own sandbox cannot start; the page is ours
  browser ??= await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ["--no-sandbox"], timeout: 30_000 });
  context ??= await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_WAIT_MS);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(url);
  await page.waitForSelector("body[data-ready]");
  return { page, errors };
}

const visibleRows = (page: Page) => page.locator("#rows .row:visible");

describe("the page's pieces (no browser)", () => {
  test("embedded JSON never ends its script element, and parses back to the same value", () => {
    const value = { s: HOSTILE, k: { [HOSTILE]: "\u2028\u2029&" } };
    const text = embedJson(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
    const page = tracePage({ title: HOSTILE, components: [HOSTILE], steps: [] });
    // exactly the page's own two script elements close; the title is text
    expect(page.match(/<\/script/gi)).toHaveLength(2);
    expect(page).not.toContain("<img");
  });

  test("steps pair each incoming message with its routed copy; answers carry their request's method, session and time", () => {
    const records = readFileSync(writeTrace("pairs.jsonl", sampleTrace()), "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l));
    const steps = stepsOf(records);
    expect(steps.map((s) => `${s.from}>${s.to} ${s.kind} ${s.method}`)).toEqual([
      "client>0 req session/prompt",
      "0>1 req session/prompt",
      "1>0 note session/update",
      "0>client note session/update",
      `0>client note x/${HOSTILE}`,
      "1>0 res session/prompt",
      "0>client res session/prompt",
    ]);
    expect(steps[1]!.as).toBe("from proxy/successor");
    expect(steps[5]).toMatchObject({ session: "sess-a", took: 1.5 });
    expect(steps[6]).toMatchObject({ session: "sess-a", took: 2.5 });
    // a batch is one step; an incoming message nothing routed goes to the conductor
    const batch = stepsOf([{ t: 1, hop: "client", dir: "in", message: [prompt(1, "s", "a"), { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } }] }]);
    expect(batch).toEqual([expect.objectContaining({ from: "client", to: "conductor", method: "batch", kind: "req", session: "s", summary: "2 messages: session/prompt, session/cancel" })]);
  });

  test("lines: a partial last line waits for its newline; an over-long line is refused by number; a non-trace line is named", () => {
    const split = new LineSplitter(64);
    expect(split.feed(Buffer.from('{"components":[]}\n{"t":1,'))).toEqual([{ line: 1, text: '{"components":[]}' }]);
    const [two, three, four, ...more] = split.feed(Buffer.from('"hop":0}\r\n' + "x".repeat(100) + "\nok\n"));
    expect([two, four, more]).toEqual([{ line: 2, text: '{"t":1,"hop":0}' }, { line: 4, text: "ok" }, []]);
    expect(three!.error).toBeInstanceOf(TraceLineError);
    expect(three!.error!.message).toBe("line 3 is longer than 64 bytes (MAX_TRACE_LINE_BYTES)");
    expect(() => parseTraceLine('{"t":1,"hop":0,"dir":"sideways","message":{}}', 7)).toThrow('line 7 is not a trace record ({"t", "hop", "dir", "message"}): ');
    expect(() => parseTraceLine("[1,2]", 2)).toThrow(TraceLineError);
    expect(parseTraceLine("   ", 9)).toBeUndefined();
    // a hop is a lane in the page: a garbage hop number must not ask for a billion lanes
    expect(() => parseTraceLine('{"t":1,"hop":1000000000,"dir":"in","message":{}}', 2)).toThrow("line 2 is not a trace record");
    expect(() => parseTraceLine('{"t":1,"hop":-1,"dir":"in","message":{}}', 2)).toThrow("line 2 is not a trace record");
    expect(parseTraceLine('{"t":1,"hop":3,"dir":"in","message":{}}', 2)).toEqual({ kind: "record", record: { t: 1, hop: 3, dir: "in", message: {} } });
  });
});

describe("bad input through the binary", () => {
  test("a missing file, a file that is not a trace, --html with --serve, a bad --port: one clear line each, exit 2", () => {
    const missing = runBin(["conductor", "trace", join(work, "nope.jsonl"), "--html", join(work, "o.html")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`tendril conductor trace: cannot read ${join(work, "nope.jsonl")}: no such file\n`);
    const notTrace = writeTrace("not-trace.jsonl", JSON.stringify({ components: ["a"] }) + "\n" + rec(1, 0, "in", {}) + "# a comment\n");
    const bad = runBin(["conductor", "trace", notTrace, "--html", join(work, "o.html")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`tendril conductor trace: ${notTrace} is not a trace: line 3 is not JSON: "# a comment"\n`);
    expect(existsSync(join(work, "o.html"))).toBe(false);
    const badServe = runBin(["conductor", "trace", notTrace, "--serve"]);
    expect(badServe.code).toBe(2);
    expect(badServe.stderr).toContain("line 3 is not JSON");
    expect(runBin(["conductor", "trace", notTrace, "--html", "x", "--serve"]).stderr).toBe("tendril conductor trace: --html and --serve: choose one\n");
    const port = runBin(["conductor", "trace", notTrace, "--serve", "--port", "http"]);
    expect([port.code, port.stderr]).toEqual([2, 'tendril conductor trace: --port must be a port number (0-65535; 0 takes any free port), got "http"\n']);
    expect(runBin(["conductor", "trace", notTrace, "--port", "80"]).stderr).toBe("tendril conductor trace: --port needs --serve\n");
    const long = writeTrace("long-line.jsonl", rec(1, 0, "in", update("s", "x".repeat(200))));
    const over = runBin(["conductor", "trace", long, "--html", join(work, "o.html")], { env: { ...process.env, TENDRIL_MAX_TRACE_LINE_BYTES: "100" } });
    expect([over.code, over.stderr]).toEqual([2, `tendril conductor trace: ${long} is not a trace: line 1 is longer than 100 bytes (MAX_TRACE_LINE_BYTES)\n`]);
    const badLimit = runBin(["conductor", "trace", long, "--serve"], { env: { ...process.env, TENDRIL_TRACE_POLL_MS: "soon" } });
    expect([badLimit.code, badLimit.stderr]).toEqual([2, 'tendril conductor trace: TENDRIL_TRACE_POLL_MS must be a positive number of milliseconds, got "soon"\n']);
    expect(runBin(["conductor", "trace", notTrace, "--html", "x", "--no-color"]).stderr).toBe("tendril conductor trace: --no-color is for the text diagram; the page has its own colours\n");
  });

  test("a run cut off mid-line: the page is written without the half line and says so; an unwritable OUT exits 1", () => {
    const whole = sampleTrace();
    const file = writeTrace("cut.jsonl", whole + rec(9, 0, "in", update("s", "late")).slice(0, 30));
    const out = join(work, "cut.html");
    const r = runBin(["conductor", "trace", file, "--html", out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`tendril conductor trace: ${file}: line 16 is cut short (the trace was still being written?): skipped\ntendril conductor trace: wrote ${out} (7 messages)\n`);
    expect(readFileSync(out, "utf8")).toContain("line 16 is cut short");
    const unwritable = runBin(["conductor", "trace", file, "--html", join(work, "no-such-dir", "x.html")]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toContain(`tendril conductor trace: cannot write ${join(work, "no-such-dir", "x.html")}: `);
  });

  test("a port in use: one line naming it, exit 2, nothing on stdout", async () => {
    const file = writeTrace("port.jsonl", sampleTrace());
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = runBin(["conductor", "trace", file, "--serve", "--port", String(port)]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(`tendril conductor trace: port ${port} on 127.0.0.1 is in use (--port 0 takes any free port)\n`);
    } finally {
      taken.close();
    }
  });

  test("--html writes a private page (it holds the whole trace) and says how many messages", () => {
    const out = join(work, "sample.html");
    const r = runBin(["conductor", "trace", writeTrace("sample.jsonl", sampleTrace()), "--html", out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`tendril conductor trace: wrote ${out} (7 messages)\n`);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const html = readFileSync(out, "utf8");
    // self-contained: nothing loads from elsewhere (the embedded data, hostile strings and all, aside)
    const markup = html.replace(/<script type="application\/json" id="trace-data">[^<]*<\/script>/, "");
    expect(markup).not.toBe(html);
    expect(markup).not.toMatch(/<(?:link|img|iframe|object|embed)\b|\bsrc=|\bhref=|https?:\/\/|@import|url\(/i);
  });

  test("--serve answers only requests addressed to 127.0.0.1 (a rebinding page elsewhere cannot read the trace)", async () => {
    const viewer = await startViewer(writeTrace("host.jsonl", sampleTrace()));
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(viewer.url, { headers: { host }, timeout: PAGE_WAIT_MS }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    const port = new URL(viewer.url).port;
    expect(await get(`127.0.0.1:${port}`)).toBe(200);
    expect(await get(`evil.example:${port}`)).toBe(403);
  }, 30_000);

  test("A13: --serve answers only under the random token in its URL, and keeps at most MAX_TRACE_CONNECTIONS connections", async () => {
    const viewer = await startViewer(writeTrace("token.jsonl", sampleTrace()));
    const other = await startViewer(writeTrace("token2.jsonl", sampleTrace()));
    const url = new URL(viewer.url);
    expect(url.pathname).toMatch(/^\/[0-9a-f]{32}\/$/);
    expect(new URL(other.url).pathname).not.toBe(url.pathname);
    const status = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(new URL(path, viewer.url), { timeout: PAGE_WAIT_MS }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await status(url.pathname)).toBe(200);
    for (const guess of ["/", "/events", `${url.pathname}x`, `/${"0".repeat(32)}/`, `/${"0".repeat(32)}/events`]) expect([guess, await status(guess)]).toEqual([guess, 404]);
    // Past the cap a connection is closed at once; below it, served.
    const held: Socket[] = [];
    for (let i = 0; i < DEFAULT_LIMITS.MAX_TRACE_CONNECTIONS; i++) {
      const s = connect(Number(url.port), "127.0.0.1");
      await new Promise((r) => s.once("connect", r));
      held.push(s);
    }
    await Bun.sleep(100);
    const extra = connect(Number(url.port), "127.0.0.1");
    extra.on("error", () => {});
    const closed = await new Promise<boolean>((resolve) => {
      extra.once("close", () => resolve(true));
      setTimeout(() => resolve(false), PAGE_WAIT_MS);
    });
    expect(closed).toBe(true);
    held.pop()!.destroy();
    await Bun.sleep(100);
    expect(await status(url.pathname)).toBe(200);
    for (const s of held) s.destroy();
  }, 30_000);
});

describe.skipIf(!CHROMIUM)("in chromium", () => {
  test("the --html page: one lane per component, arrows in time order, a click shows the JSON, filters hide messages, hostile strings stay text", async () => {
    const out = join(work, "page.html");
    expect(runBin(["conductor", "trace", writeTrace("page.jsonl", sampleTrace()), "--html", out]).code).toBe(0);
    const { page, errors } = await openPage(`file://${out}`);
    expect(await page.locator("#lanes .lane").allTextContents()).toEqual(["client", "conductor", "#0 raw-proxy.ts", `#1 agent${HOSTILE}`]);
    await expect(visibleRows(page).count()).resolves.toBe(7);
    expect(await page.locator("#rows .row .t").allTextContents()).toEqual(["1.00", "1.50", "2.00", "2.50", "2.70", "3.00", "3.50"]);
    // the first arrow runs from the client's lane to #0's, pointing right; the update back points left
    const lane = async (i: number) => (await page.locator(`#lanes .lane[data-lane="${i}"]`).boundingBox())!;
    const arrow = async (row: number) => (await page.locator("#rows .row").nth(row).locator(".arrow").boundingBox())!;
    const [client, proxy, first] = [await lane(0), await lane(2), await arrow(0)];
    expect(Math.abs(first.x - (client.x + client.width / 2))).toBeLessThan(8);
    expect(Math.abs(first.x + first.width - (proxy.x + proxy.width / 2))).toBeLessThan(8);
    expect(await page.locator("#rows .row").nth(2).locator(".arrow.left").count()).toBe(1);
    expect(await page.locator("#rows .row").nth(6).textContent()).toContain("↩ session/prompt  stopReason=end_turn  (2.50 ms)");

    await page.locator("#rows .row").nth(0).click();
    const shown = JSON.parse((await page.locator("#detail pre.json").first().textContent())!);
    expect(shown).toEqual(prompt(5, "sess-a", `hello ${HOSTILE}`));
    expect(JSON.parse((await page.locator("#detail pre.routed").textContent())!)).toEqual(prompt(0, "sess-a", `hello ${HOSTILE}`));
    expect(await page.locator("#detail h2").first().textContent()).toBe("client → #0 raw-proxy.ts at 1.00 ms");
    await page.keyboard.press("Escape");
    expect(await page.locator("#detail").isVisible()).toBe(false);
    await page.locator("#rows .row").nth(5).focus();
    await page.keyboard.press("Enter");
    expect(JSON.parse((await page.locator("#detail pre.json").first().textContent())!)).toEqual({ jsonrpc: "2.0", id: 0, result: { stopReason: "end_turn" } });
    await page.locator("#detail .close").click();
    expect(await page.locator("#detail").isVisible()).toBe(false);

    await page.selectOption("#f-session", "sess-b");
    expect(await visibleRows(page).count()).toBe(2);
    expect(await page.locator("#status").textContent()).toBe("7 messages, 2 shown");
    await page.selectOption("#f-session", "");
    await page.fill("#f-method", "session/*");
    expect(await visibleRows(page).count()).toBe(6);
    await page.fill("#f-method", "update");
    expect(await visibleRows(page).count()).toBe(2);
    await page.fill("#f-method", "");
    expect(await visibleRows(page).count()).toBe(7);

    // nothing from the trace ran or became markup
    expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();
    expect(await page.locator("img, #rows script").count()).toBe(0);
    expect(await page.locator("#rows .row").nth(4).textContent()).toContain(`x/${HOSTILE}`);
    expect(errors).toEqual([]);
  }, 60_000);

  test("--session and --method open the page with those filters", async () => {
    const out = join(work, "filtered.html");
    expect(runBin(["conductor", "trace", writeTrace("filtered.jsonl", sampleTrace()), "--html", out, "--session", "sess-b"]).code).toBe(0);
    const { page } = await openPage(`file://${out}`);
    expect(await page.locator("#f-session").inputValue()).toBe("sess-b");
    expect(await visibleRows(page).count()).toBe(2);
  }, 60_000);

  test("a long trace: only the rows in view are drawn; scrolled to the end, the last message shows; a filter finds one far down", async () => {
    let text = JSON.stringify({ components: ["agent.ts"] }) + "\n";
    for (let i = 0; i < 3000; i++) text += rec(i, 0, "in", update(i === 2999 ? "sess-last" : "s", `chunk ${i}`)) + rec(i + 0.5, "client", "out", update(i === 2999 ? "sess-last" : "s", `chunk ${i}`));
    const out = join(work, "long.html");
    expect(runBin(["conductor", "trace", writeTrace("long.jsonl", text), "--html", out]).code).toBe(0);
    const { page } = await openPage(`file://${out}`);
    expect(await page.locator("#status").textContent()).toBe("3000 messages");
    expect(await page.locator("#rows .row").count()).toBeLessThan(200);
    expect(await page.locator("#rows .row", { hasText: '"chunk 2999"' }).count()).toBe(0);
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await page.locator("#rows .row", { hasText: '"chunk 2999"' }).waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.selectOption("#f-session", "sess-last");
    expect(await page.locator("#rows .row").allTextContents()).toEqual([expect.stringContaining('"chunk 2999"')]);
  }, 60_000);

  test("an empty trace makes a page that says no messages", async () => {
    const out = join(work, "empty.html");
    const r = runBin(["conductor", "trace", writeTrace("empty.jsonl", ""), "--html", out]);
    expect([r.code, r.stderr]).toEqual([0, `tendril conductor trace: wrote ${out} (0 messages)\n`]);
    const { page } = await openPage(`file://${out}`);
    expect(await page.locator("#empty").isVisible()).toBe(true);
    expect(await page.locator("#empty").textContent()).toBe("no messages");
    expect(await page.locator("#lanes .lane").allTextContents()).toEqual(["client", "conductor"]);
  }, 60_000);

  test("--serve follows a real chain's trace: lanes named, a prompt sent after the page opened appears; SIGINT exits 130", async () => {
    const file = join(work, "chain.jsonl");
    const chain = spawnRawMode("conductor", { BURST: "2" }, ["agent", "--trace", file, `DIALECT=proxy ${RAW_PROXY}`, BURST_AGENT]);
    raws.push(chain);
    chain.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await chain.response(1);
    const viewer = await startViewer(file);
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/$/);
    const { page, errors } = await openPage(viewer.url);
    expect(await page.locator("#live").textContent()).toBe("live");
    await page.locator("#rows .row", { hasText: "↩ initialize" }).first().waitFor();
    expect(await page.locator("#lanes .lane").allTextContents()).toEqual(["client", "conductor", "#0 raw-proxy.ts", "#1 burst-agent.ts"]);
    expect(await page.locator("#rows .row", { hasText: "hello live" }).count()).toBe(0);

    chain.writeLine(prompt(2, "burst-1", "hello live"));
    await chain.response(2);
    await page.locator("#rows .row", { hasText: "hello live" }).first().waitFor();
    await page.locator("#rows .row", { hasText: "↩ session/prompt" }).nth(1).waitFor();
    expect(errors).toEqual([]);

    viewer.child.kill("SIGINT");
    expect(await viewer.exited(PAGE_WAIT_MS)).toBe(130);
    await page.locator("#live.down").waitFor();
    chain.child.stdin.end();
    expect(await chain.exited()).toBe(0);
  }, 60_000);

  test("--serve: a line written in two pieces shows once whole; a bad line is reported and following goes on; a new run resets the page; SIGTERM exits 143", async () => {
    const file = writeTrace("live.jsonl", JSON.stringify({ components: ["p.ts"] }) + "\n" + rec(1, "client", "in", update("s", "first")));
    const viewer = await startViewer(file);
    const { page } = await openPage(viewer.url);
    await page.locator("#rows .row", { hasText: "first" }).waitFor();

    // one write: a whole line and half of the next; once the whole one shows, the half was read too
    const third = rec(3, 0, "in", update("s", "third"));
    appendFileSync(file, rec(2, 0, "in", update("s", `second ${HOSTILE}`)) + third.slice(0, 40));
    await page.locator("#rows .row", { hasText: "second" }).waitFor();
    expect(await page.locator("#problems").textContent()).toBe(""); // the half line waits for the rest
    appendFileSync(file, third.slice(40) + "not json\n" + rec(4, 0, "in", update("s", "fourth")));
    await page.locator("#rows .row", { hasText: "fourth" }).waitFor();
    expect(await page.locator("#rows .row").allTextContents()).toEqual([
      expect.stringContaining('"first"'),
      expect.stringContaining(`second </script><script>window.pwned=1</script>`),
      expect.stringContaining('"third"'),
      expect.stringContaining('"fourth"'),
    ]);
    expect(await page.locator("#problems").textContent()).toBe('line 5 is not JSON: "not json"');
    await waitFor(() => viewer.stderr().includes("line 5 is not JSON"), PAGE_WAIT_MS);
    expect(viewer.stderr()).toContain(`tendril conductor trace: ${file}: line 5 is not JSON: "not json"\n`);
    expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();

    // a new run truncates the file: the page starts over with the new run's lanes and messages
    truncateSync(file, 0);
    appendFileSync(file, JSON.stringify({ components: ["q.ts", "r.ts"] }) + "\n" + rec(1, 1, "in", update("s", "new run")));
    await page.locator("#rows .row", { hasText: "new run" }).waitFor();
    expect(await page.locator("#rows .row").count()).toBe(1);
    expect(await page.locator("#lanes .lane").allTextContents()).toEqual(["client", "conductor", "#0 q.ts", "#1 r.ts"]);

    viewer.child.kill("SIGTERM");
    expect(await viewer.exited(PAGE_WAIT_MS)).toBe(143);
  }, 60_000);
});
