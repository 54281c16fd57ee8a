// Owns the loopback fake LLM: an HTTP server speaking Anthropic Messages and OpenAI Chat Completions,
// answering scripted turns with injectable faults (status + retry-after, delay, hang, truncated stream).
// Wire shapes live in fake-llm-wire.ts. Runnable alone: `bun tests/fake-llm.ts --script FILE.json`.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { readFileSync } from "node:fs";
import {
  anthropicError,
  anthropicEvents,
  anthropicJson,
  encodeSse,
  type FakeTurn,
  openaiChunks,
  openaiError,
  openaiJson,
  resolveTurn,
  type SseEvent,
} from "./fake-llm-wire.ts";

export type { FakeFault, FakeToolCall, FakeTurn } from "./fake-llm-wire.ts";

export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body (undefined when it was not JSON). */
  body: any;
}

export interface FakeLlmOptions {
  script?: FakeTurn[];
  respond?: (req: FakeRequest) => FakeTurn;
  /** Pause between streamed events (default 0). */
  eventDelayMs?: number;
}

export interface FakeLlm {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  readonly url: string;
  /** As ANTHROPIC_BASE_URL (= url). */
  readonly anthropicBaseUrl: string;
  /** As OPENAI_BASE_URL (= url + "/v1"). */
  readonly openaiBaseUrl: string;
  /** Every request received, in order. */
  readonly requests: FakeRequest[];
  /** Appends turns, consumed one per request in order. */
  script(turns: FakeTurn[]): void;
  /** Answers from `fn` whenever the script is empty. */
  respond(fn: ((req: FakeRequest) => FakeTurn) | undefined): void;
  /** Scripted turns not yet consumed. */
  remaining(): number;
  /** Closes the server and every open socket. */
  close(): Promise<void>;
}

const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
type Api = "anthropic" | "openai";

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) throw new Error(`request body over ${MAX_REQUEST_BYTES} bytes`);
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString("utf8");
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

function sendError(res: ServerResponse, api: Api, status: number, message: string, extra: Record<string, string> = {}, body?: string): void {
  const text = body ?? (api === "anthropic" ? anthropicError(status, message) : openaiError(status, message));
  res.writeHead(status, { "content-type": "application/json", ...extra });
  res.end(text);
}

export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const queue: FakeTurn[] = [...(opts.script ?? [])];
  let responder = opts.respond;
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const closing = new AbortController();
  let ids = 0;
  const nextId = () => ++ids;

  async function stream(res: ServerResponse, events: SseEvent[], truncate: boolean): Promise<void> {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    // A truncated stream stops after about half the events, mid-message, then the socket dies.
    const upTo = truncate ? Math.max(2, Math.floor(events.length / 2)) : events.length;
    for (let i = 0; i < upTo; i++) {
      if (closing.signal.aborted || res.destroyed) return;
      res.write(encodeSse(events[i]!));
      if (opts.eventDelayMs) await sleep(opts.eventDelayMs, closing.signal);
    }
    if (truncate) {
      await sleep(30, closing.signal);
      res.socket?.destroy();
      return;
    }
    res.end();
  }

  async function answer(api: Api, fr: FakeRequest, bodyBytes: number, res: ServerResponse): Promise<void> {
    const turn = queue.shift() ?? responder?.(fr);
    if (!turn) {
      sendError(res, api, 400, "fake LLM: no scripted turn left", { "x-should-retry": "false" });
      return;
    }
    const fault = turn.fault ?? {};
    if (fault.delayMs) await sleep(fault.delayMs, closing.signal);
    if (fault.hang) {
      // Headers go out so a streaming client is mid-response; the body never comes.
      if (fr.body?.stream) res.writeHead(200, { "content-type": "text/event-stream" });
      await new Promise<void>((resolve) => {
        res.on("close", resolve);
        closing.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return;
    }
    if (fault.status) {
      const extra: Record<string, string> = {};
      if (fault.retryAfterS !== undefined) extra["retry-after"] = String(fault.retryAfterS);
      sendError(res, api, fault.status, `fake LLM: scripted HTTP ${fault.status}`, extra, fault.body);
      return;
    }
    const model = String(fr.body?.model ?? "fake-model");
    const t = resolveTurn(turn, bodyBytes, model, nextId, api === "anthropic" ? "toolu_fake_" : "call_fake_");
    if (fr.body?.stream) {
      const includeUsage = fr.body?.stream_options?.include_usage === true;
      await stream(res, api === "anthropic" ? anthropicEvents(t) : openaiChunks(t, includeUsage), fault.truncate === true);
      return;
    }
    const json = JSON.stringify(api === "anthropic" ? anthropicJson(t) : openaiJson(t));
    if (fault.truncate) {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(json)) });
      res.write(json.slice(0, Math.floor(json.length / 2)));
      await sleep(30, closing.signal);
      res.socket?.destroy();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(json);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    const api: Api | undefined =
      path === "/v1/messages" ? "anthropic" : path === "/v1/chat/completions" ? "openai" : undefined;
    const text = await readBody(req);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const fr: FakeRequest = { method: req.method ?? "GET", path, headers: flatHeaders(req), body };
    requests.push(fr);
    if (!api || req.method !== "POST") {
      sendError(res, "openai", 404, `fake LLM: no route ${req.method} ${path}`, { "x-should-retry": "false" });
      return;
    }
    if (body === undefined) {
      sendError(res, api, 400, "fake LLM: request body is not JSON", { "x-should-retry": "false" });
      return;
    }
    await answer(api, fr, Buffer.byteLength(text), res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, "openai", 500, `fake LLM: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const addr = server.address();
  if (addr === null || typeof addr === "string") throw new Error("fake LLM: no TCP address");
  const url = `http://127.0.0.1:${addr.port}`;

  return {
    url,
    anthropicBaseUrl: url,
    openaiBaseUrl: `${url}/v1`,
    requests,
    script: (turns) => void queue.push(...turns),
    respond: (fn) => void (responder = fn),
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
        // Bun's server.close callback can wait on idle keep-alive sockets; do not let a test hang on it.
        setTimeout(resolve, 200).unref?.();
      }),
  };
}

/** Script file: a JSON array of turns, or `{"turns": [...], "repeat": turn}` (repeat answers once the list is used up). */
function loadScriptFile(path: string): FakeLlmOptions {
  const raw = JSON.parse(readFileSync(path, "utf8")) as unknown;
  if (Array.isArray(raw)) return { script: raw as FakeTurn[] };
  const obj = (raw ?? {}) as { turns?: FakeTurn[]; repeat?: FakeTurn };
  const repeat = obj.repeat;
  return { script: obj.turns ?? [], ...(repeat ? { respond: () => repeat } : {}) };
}

if (import.meta.main) {
  const i = process.argv.indexOf("--script");
  const file = i >= 0 ? process.argv[i + 1] : undefined;
  const fake = await startFakeLlm(file ? loadScriptFile(file) : {});
  process.stdout.write(`${fake.url}\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
