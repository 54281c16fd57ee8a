// Owns what the two SDK adapters share at the HTTP edge: their options, one request's abort/timeout/
// byte-count state (a counting fetch) and the router that lets one SDK client serve every request,
// tool-input parsing, and failures → LlmError with advice.
// Does not import either SDK: adapters pass the facts (status, error class) in.
import { isObject } from "../wire/jsonrpc.ts";
import type { LlmError, LlmEvent, LlmRequest, ToolCall } from "./types.ts";

export interface SdkProviderOptions {
  apiKey?: string;
  /** Custom endpoint; undefined = the vendor's default. */
  baseUrl?: string;
  /** MAX_LLM_RESPONSE_BYTES: a response streaming more bytes is cut and reported as `too_large`. */
  maxResponseBytes: number;
  /** LLM_TIMEOUT_S: one request, retries included. */
  timeoutS: number;
  /** LLM_MAX_RETRIES: the SDK's own retries (429, 5xx, connection errors), honouring retry-after. */
  maxRetries: number;
}

/** Who we are talking to, for error messages. */
export interface Endpoint {
  keyVar: string;
  baseVar: string;
  baseUrl: string;
}

/** Facts about a thrown SDK error, extracted by the adapter that knows the SDK's classes. */
export interface FailureFacts {
  status?: number;
  message: string;
  connection: boolean;
}

/**
 * One request's lifetime: links the caller's signal, enforces the overall timeout and counts
 * response bytes through `fetch`. SDKs end a stream quietly when aborted, so the reason is kept here.
 */
export class RequestRun {
  readonly controller = new AbortController();
  reason: "caller" | "timeout" | "too_large" | undefined;
  bytes = 0;
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onCallerAbort = () => this.stop("caller");

  /** HTTP attempts so far, and the status of the last one when it was 429 or 5xx (the SDK retries those). */
  #attempts = 0;
  #lastRetryable?: number;

  constructor(
    private readonly caller: AbortSignal,
    private readonly opts: SdkProviderOptions,
    private readonly onRetry?: LlmRequest["onRetry"],
  ) {
    if (caller.aborted) this.stop("caller");
    caller.addEventListener("abort", this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => this.stop("timeout"), opts.timeoutS * 1000);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  stop(reason: NonNullable<RequestRun["reason"]>): void {
    if (this.reason === undefined) this.reason = reason;
    this.controller.abort();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener("abort", this.onCallerAbort);
    this.controller.abort(); // ends a stream the consumer stopped reading
    for (const f of this.#onDispose.splice(0)) f();
  }

  readonly #onDispose: (() => void)[] = [];

  /** Runs `f` when the run is disposed. */
  onDispose(f: () => void): void {
    this.#onDispose.push(f);
  }

  /** A fetch whose response bodies are counted; over the bound, the request is aborted. */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    // A second attempt of this run is the SDK's retry: after a 429/5xx it is reported.
    this.#attempts++;
    if (this.#lastRetryable !== undefined) this.onRetry?.({ status: this.#lastRetryable, attempt: this.#attempts });
    this.#lastRetryable = undefined;
    const res = await fetch(input, init);
    if (res.status === 429 || res.status >= 500) this.#lastRetryable = res.status;
    if (!res.body) return res;
    const limit = this.opts.maxResponseBytes;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, ctl) => {
        this.bytes += chunk.byteLength;
        if (this.bytes > limit) {
          this.stop("too_large");
          ctl.error(new Error(`response over ${limit} bytes`));
          return;
        }
        ctl.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(counter), { status: res.status, statusText: res.statusText, headers: res.headers });
  };

  /** The error for a run that ended because of us (abort, timeout, size), if it did. */
  ownFailure(ep: Endpoint): LlmError | undefined {
    switch (this.reason) {
      case "caller":
        return { kind: "aborted", message: "LLM request aborted" };
      case "timeout":
        return {
          kind: "transport",
          message: `LLM request to ${ep.baseUrl} timed out after ${this.opts.timeoutS} s (LLM_TIMEOUT_S); raise TENDRIL_LLM_TIMEOUT_S or check the server`,
        };
      case "too_large":
        return {
          kind: "too_large",
          message: `LLM response exceeded MAX_LLM_RESPONSE_BYTES (${this.opts.maxResponseBytes} bytes) and was cut off; raise TENDRIL_MAX_LLM_RESPONSE_BYTES or lower TENDRIL_MAX_TOKENS`,
        };
      default:
        return undefined;
    }
  }
}

/** Maps a failure the SDK reported (after its own retries) to an error the loop and the user can act on. */
export function classifyFailure(f: FailureFacts, ep: Endpoint): LlmError {
  const s = f.status;
  // SDK messages start with the status ("401 …"); the message below says it once.
  const detail = f.message.replace(/\s+/g, " ").trim().replace(/^\d{3} /, "").slice(0, 500);
  if (s === 401 || s === 403) {
    return {
      kind: "auth",
      status: s,
      message: `LLM authentication failed (HTTP ${s}): ${detail}. Set ${ep.keyVar} to a valid API key (and check ${ep.baseVar}, now ${ep.baseUrl})`,
    };
  }
  if (s === 429) return { kind: "rate_limit", status: s, message: `LLM rate limit (HTTP 429) persisted after retries: ${detail}. Wait and try again` };
  if (s !== undefined && s >= 500) return { kind: "server", status: s, message: `LLM server error (HTTP ${s}) persisted after retries: ${detail}` };
  if (s !== undefined) return { kind: "bad_request", status: s, message: `LLM rejected the request (HTTP ${s}): ${detail}` };
  if (/overloaded/i.test(detail)) return { kind: "server", message: `LLM server overloaded mid-stream: ${detail}` };
  if (f.connection) {
    return { kind: "transport", message: `cannot reach the LLM at ${ep.baseUrl}: ${detail}. Check ${ep.baseVar} and that the server is up` };
  }
  return { kind: "transport", message: `LLM stream from ${ep.baseUrl} failed: ${detail}` };
}

export function truncatedStream(ep: Endpoint): LlmError {
  return { kind: "transport", message: `LLM stream from ${ep.baseUrl} ended before the response was complete (connection cut?)` };
}

export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && !err.message.includes(cause.message) ? `${err.message} (${cause.message})` : err.message;
}

/**
 * Tool input as streamed: "" is `{}`; JSON that is not an object (cut off, or the model wrote prose)
 * becomes `{"_raw": text}` so the call still reaches the loop, the tool answers with a schema error
 * the model can read and fix, and the client shows what the model actually sent.
 */
export function parseToolInput(text: string): ToolCall["input"] {
  if (text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v)) return v as ToolCall["input"];
  } catch {
    // fall through: keep the raw text
  }
  return { _raw: text };
}

/** How an adapter folds its SDK's stream chunks into events. */
export interface ChunkFolder<C> {
  push(chunk: C): Iterable<LlmEvent>;
  /** True once the stream's own end marker arrived (`message_stop`, a `finish_reason`). */
  readonly complete: boolean;
  /** The events after a complete stream: any deferred tool calls, then `done`. */
  finish(): Iterable<LlmEvent>;
}

/** What one adapter supplies for one streamed request; the rest is common to both SDKs. */
export interface SdkStreamPlan<C> {
  ep: Endpoint;
  /** Advice when no usable key is set; undefined when there is one. */
  missingKey?: string;
  fold: ChunkFolder<C>;
  /** Starts the SDK call with the run's counting fetch and abort signal. */
  open(run: RequestRun): Promise<AsyncIterable<C>>;
  /** Maps an error the SDK threw (the adapter knows its classes). */
  failureOf(err: unknown): LlmError;
}

/** The header that tells the shared client's fetch which run a request belongs to (removed before sending). */
const RUN_HEADER = "x-tendril-run";

/**
 * What lets one SDK client per provider serve every request: its fetch finds each request's run (the
 * counting fetch, the abort) by a header the request carries, so no client is built per request.
 */
export class RunRouter {
  readonly #runs = new Map<string, RequestRun>();
  #next = 0;

  /** The fetch to give the SDK client. A request without a known run goes out as it is. */
  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const id = headers.get(RUN_HEADER);
    const run = id === null ? undefined : this.#runs.get(id);
    if (!run) return fetch(input, init);
    headers.delete(RUN_HEADER);
    return run.fetch(input, { ...init, headers });
  };

  /** The per-request options that route a request to `run` (its signal and header); the run is
   *  forgotten when it is disposed. */
  requestOptions(run: RequestRun): { signal: AbortSignal; headers: Record<string, string> } {
    const id = String(++this.#next);
    this.#runs.set(id, run);
    run.onDispose(() => this.#runs.delete(id));
    return { signal: run.signal, headers: { [RUN_HEADER]: id } };
  }
}

/** The SDK client options both adapters use: key, endpoint, retries, per-attempt timeout, the routed fetch. */
export function sdkClientOptions(apiKey: string, ep: Endpoint, opts: SdkProviderOptions, router: RunRouter) {
  return { apiKey, baseURL: ep.baseUrl, maxRetries: opts.maxRetries, timeout: opts.timeoutS * 1000, fetch: router.fetch };
}

/**
 * Runs one streamed SDK request to exactly one `done` or `error` event: a missing key, a thrown SDK
 * error, our own abort/timeout/size stop, or a stream that ended without its end marker all become
 * `error` events; nothing is thrown.
 */
export async function* streamThroughSdk<C>(req: LlmRequest, opts: SdkProviderOptions, plan: SdkStreamPlan<C>): AsyncGenerator<LlmEvent> {
  if (plan.missingKey !== undefined) {
    yield { type: "error", error: { kind: "auth", message: plan.missingKey } };
    return;
  }
  const run = new RequestRun(req.signal, opts, req.onRetry);
  let failure: LlmError | undefined;
  try {
    for await (const chunk of await plan.open(run)) yield* plan.fold.push(chunk);
  } catch (err) {
    failure = run.ownFailure(plan.ep) ?? plan.failureOf(err);
  } finally {
    run.dispose();
  }
  failure ??= run.ownFailure(plan.ep) ?? (plan.fold.complete ? undefined : truncatedStream(plan.ep));
  if (failure) {
    yield { type: "error", error: failure };
    return;
  }
  yield* plan.fold.finish();
}
