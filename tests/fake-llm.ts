// Owns the loopback fake LLM: an HTTP server speaking Anthropic Messages, OpenAI Chat Completions and Responses,
// answering scripted turns with injectable faults (status + retry-after, delay, hang, truncated stream).
// Wire shapes live in fake-llm-wire.ts and fake-llm-responses.ts. Runnable alone: `bun tests/fake-llm.ts --script FILE.json`.
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
import { responsesEvents, responsesJson } from "./fake-llm-responses.ts";

export type { FakeFault, FakeToolCall, FakeTurn } from "./fake-llm-wire.ts";

export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body (undefined when it was not JSON). */
  body: any;
  /** The body as it came, for byte-level checks. */
  text: string;
  /** Date.now() when the request arrived (retry spacing is observable). */
  at: number;
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
  /** Sets what GET /v1/models lists. */
  setModels(ids: string[]): void;
  /** How many times GET /v1/models was asked. */
  modelListings(): number;
  /** Closes the server and every open socket. */
  close(): Promise<void>;
}

const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
const ROUTES: Record<string, Api> = { "/v1/messages": "anthropic", "/v1/chat/completions": "openai", "/v1/responses": "responses" };
type Api = "anthropic" | "openai" | "responses";

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

/** One fake's state and request handling; startFakeLlm wraps it in the FakeLlm interface. */
class FakeServer {
  readonly queue: FakeTurn[];
  readonly requests: FakeRequest[] = [];
  /** What GET /v1/models lists. */
  models = ["fake-model", "fake-model-large"];
  listings = 0;
  readonly sockets = new Set<Socket>();
  readonly closing = new AbortController();
  responder: FakeLlmOptions["respond"];
  private ids = 0;

  constructor(private readonly opts: FakeLlmOptions) {
    this.queue = [...(opts.script ?? [])];
    this.responder = opts.respond;
  }

  private sleep(ms: number): Promise<void> {
    return sleep(ms, this.closing.signal);
  }

  /** The model list, in a shape both SDKs read (not counted in `requests`: those are LLM calls). */
  private listModels(res: ServerResponse): void {
    const data = this.models.map((id) => ({ id, type: "model", object: "model", display_name: id, created_at: "2026-01-01T00:00:00Z", created: 0, owned_by: "fake" }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    const api: Api | undefined = ROUTES[path];
    if (path === "/v1/models" && req.method === "GET") {
      this.listings++;
      return this.listModels(res);
    }
    const text = await readBody(req);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const fr: FakeRequest = { method: req.method ?? "GET", path, headers: flatHeaders(req), body, text, at: Date.now() };
    this.requests.push(fr);
    if (!api || req.method !== "POST") {
      sendError(res, "openai", 404, `fake LLM: no route ${req.method} ${path}`, { "x-should-retry": "false" });
      return;
    }
    if (body === undefined) {
      sendError(res, api, 400, "fake LLM: request body is not JSON", { "x-should-retry": "false" });
      return;
    }
    await this.answer(api, fr, Buffer.byteLength(text), res);
  }

  private async answer(api: Api, fr: FakeRequest, bodyBytes: number, res: ServerResponse): Promise<void> {
    const turn = this.queue.shift() ?? this.responder?.(fr);
    if (!turn) {
      sendError(res, api, 400, "fake LLM: no scripted turn left", { "x-should-retry": "false" });
      return;
    }
    const fault = turn.fault ?? {};
    if (fault.delayMs) await this.sleep(fault.delayMs);
    if (fault.hang) return this.hang(res, fr.body?.stream === true);
    if (fault.status) {
      const extra: Record<string, string> = {};
      if (fault.retryAfterS !== undefined) extra["retry-after"] = String(fault.retryAfterS);
      sendError(res, api, fault.status, `fake LLM: scripted HTTP ${fault.status}`, extra, fault.body);
      return;
    }
    const model = String(fr.body?.model ?? "fake-model");
    const t = resolveTurn(turn, bodyBytes, model, () => ++this.ids, api === "anthropic" ? "toolu_fake_" : "call_fake_");
    const truncate = fault.truncate === true;
    const encrypted = Array.isArray(fr.body?.include) && fr.body.include.includes("reasoning.encrypted_content");
    if (fr.body?.stream) {
      const includeUsage = fr.body?.stream_options?.include_usage === true;
      const events = api === "anthropic" ? anthropicEvents(t) : api === "responses" ? responsesEvents(t, encrypted) : openaiChunks(t, includeUsage);
      return this.stream(res, events, truncate);
    }
    const json = JSON.stringify(api === "anthropic" ? anthropicJson(t) : api === "responses" ? responsesJson(t, encrypted) : openaiJson(t));
    res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(json)) });
    if (!truncate) return void res.end(json);
    res.write(json.slice(0, Math.floor(json.length / 2)));
    await this.cut(res);
  }

  /** Headers go out for a streaming client so it is mid-response; the body never comes. */
  private async hang(res: ServerResponse, streaming: boolean): Promise<void> {
    if (streaming) res.writeHead(200, { "content-type": "text/event-stream" });
    await new Promise<void>((resolve) => {
      res.on("close", resolve);
      this.closing.signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  private async stream(res: ServerResponse, events: SseEvent[], truncate: boolean): Promise<void> {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    // A truncated stream stops after about half the events, mid-message, then the socket dies.
    const upTo = truncate ? Math.max(2, Math.floor(events.length / 2)) : events.length;
    for (let i = 0; i < upTo; i++) {
      if (this.closing.signal.aborted || res.destroyed) return;
      res.write(encodeSse(events[i]!));
      if (this.opts.eventDelayMs) await this.sleep(this.opts.eventDelayMs);
    }
    if (truncate) await this.cut(res);
    else res.end();
  }

  /** Lets the written part reach the client, then kills the connection without finishing the body. */
  private async cut(res: ServerResponse): Promise<void> {
    await this.sleep(30);
    res.socket?.destroy();
  }
}

export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const fake = new FakeServer(opts);
  const server = createServer((req, res) => {
    fake.handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, "openai", 500, `fake LLM: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });
  server.on("connection", (s: Socket) => {
    fake.sockets.add(s);
    s.on("close", () => fake.sockets.delete(s));
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
    requests: fake.requests,
    script: (turns) => void fake.queue.push(...turns),
    respond: (fn) => void (fake.responder = fn),
    remaining: () => fake.queue.length,
    setModels: (ids) => void (fake.models = ids),
    modelListings: () => fake.listings,
    close: () =>
      new Promise<void>((resolve) => {
        fake.closing.abort();
        for (const s of fake.sockets) s.destroy();
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
