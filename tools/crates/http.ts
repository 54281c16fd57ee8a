// Owns registry HTTP: GET with a per-attempt timeout, retries with doubling backoff on 429/5xx and cut-off
// transfers (honouring Retry-After; the wait ends with the caller's abort), a byte cap on bodies, and
// progress callbacks. Connections are pooled and Content-Encoding (gzip, br) decoded by the runtime's
// fetch. Does not know what the bytes are.
import { log } from "../../core/log.ts";
import { asCrateError, CrateError } from "./errors.ts";

export interface HttpOptions {
  timeoutS: number;
  retries: number;
  backoffS: number;
  userAgent: string;
  /** Test hook and offline switch: the fetch to use (defaults to the global one). */
  fetch?: typeof fetch;
}

export interface GetOptions {
  maxBytes: number;
  /** Names the cap in the over-size message, e.g. MAX_CRATE_BYTES. */
  limitName: string;
  headers?: Record<string, string>;
  onProgress?: (received: number, total: number | undefined) => void;
  signal?: AbortSignal;
  /**
   * Streams the body instead of buffering it: called at the start of every attempt's body (so a retry
   * after a cut-off transfer starts over), it returns where the chunks go. A throw from it ends the get.
   */
  sink?: () => (chunk: Uint8Array) => void;
}

/** Statuses a registry uses for "no such file"; returned, not thrown. */
const MISSING = new Set([404, 410, 451]);
/** Failures that retrying will not fix: nothing is listening, or the name does not resolve. */
const UNREACHABLE = new Set(["ECONNREFUSED", "ConnectionRefused", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/** `body` is empty when a sink took the bytes; `not-modified` answers a request with validators (304). */
export type GetResult =
  | { status: "ok"; body: Uint8Array; etag?: string; lastModified?: string }
  | { status: "not-modified" }
  | { status: "missing"; code: number };

class Retryable extends Error {
  constructor(
    message: string,
    readonly waitS?: number,
  ) {
    super(message);
  }
}

export class Http {
  constructor(private readonly opts: HttpOptions) {}

  /** GET `url`; throws CrateError "offline" when the registry cannot be reached after the retries. */
  async get(url: string, opts: GetOptions): Promise<GetResult> {
    let delayS = this.opts.backoffS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt(url, opts);
      } catch (err) {
        if (!(err instanceof Retryable)) throw err;
        if (attempt >= this.opts.retries || opts.signal?.aborted) {
          throw new CrateError("offline", `${url}: ${err.message} (after ${attempt + 1} attempts)`);
        }
        const waitS = Math.min(Math.max(delayS, err.waitS ?? 0), this.opts.timeoutS);
        log.info("retrying", { url, why: err.message, wait_s: waitS });
        await sleep(waitS, opts.signal);
        delayS *= 2;
      }
    }
  }

  /** One request. The timeout is an idle one, restarted by every chunk (like cargo's low-speed limit): a big
   * download on a slow link goes on as long as bytes keep coming. */
  private async attempt(url: string, opts: GetOptions): Promise<GetResult> {
    const idle = new IdleTimer(this.opts.timeoutS);
    try {
      return await this.request(url, opts, idle);
    } finally {
      idle.stop();
    }
  }

  private async request(url: string, opts: GetOptions, idle: IdleTimer): Promise<GetResult> {
    const timeout = idle.signal;
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await (this.opts.fetch ?? fetch)(url, { headers: { "user-agent": this.opts.userAgent, ...opts.headers }, signal });
    } catch (err) {
      throw transportFailure(url, err, timeout);
    }
    if (res.status === 304) {
      await res.body?.cancel();
      return { status: "not-modified" };
    }
    if (MISSING.has(res.status)) {
      await res.body?.cancel();
      return { status: "missing", code: res.status };
    }
    if (res.status === 429 || res.status >= 500) {
      await res.body?.cancel();
      throw new Retryable(`HTTP ${res.status}`, retryAfterS(res.headers.get("retry-after")));
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new CrateError("failed", `${url}: HTTP ${res.status} ${res.statusText}`.trim());
    }
    try {
      const body = await readCapped(url, res, opts, () => idle.restart());
      const etag = res.headers.get("etag");
      const lastModified = res.headers.get("last-modified");
      return { status: "ok", body, ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) };
    } catch (err) {
      if (err instanceof CrateError) throw err;
      const failure = transportFailure(url, err, timeout);
      // The decoder found the compressed stream ending early or corrupt: the body was cut off.
      const encoding = contentEncoding(res);
      if (encoding && failure instanceof Retryable && !timeout.aborted) throw new Retryable(`transfer cut off: the ${encoding}-encoded body ended early or is corrupt (${failure.message})`);
      throw failure;
    }
  }
}

/** Waits `seconds`, or rejects with the signal's reason as soon as it aborts (a stop never waits out a Retry-After). */
function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", stop);
      resolve();
    };
    const timer = setTimeout(done, seconds * 1000);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** The body's Content-Encoding, or undefined for identity: the runtime's fetch decodes it. */
function contentEncoding(res: Response): string | undefined {
  const value = res.headers.get("content-encoding")?.trim().toLowerCase();
  return value && value !== "identity" ? value : undefined;
}

function transportFailure(url: string, err: unknown, timeout: AbortSignal): Error {
  if (timeout.aborted) return new Retryable(`timed out: nothing received for ${timeout.reason} s`);
  const e = err as { code?: string; cause?: { code?: string }; message?: string; name?: string };
  if (e?.name === "AbortError") return err as Error;
  const code = e?.code ?? e?.cause?.code;
  const why = code ?? e?.message ?? String(err);
  if (code && UNREACHABLE.has(code)) return new CrateError("offline", `${url}: ${why}`);
  return new Retryable(why);
}

function retryAfterS(header: string | null): number | undefined {
  if (!header) return undefined;
  const s = Number(header);
  if (Number.isFinite(s)) return Math.max(0, s);
  const when = Date.parse(header);
  return Number.isNaN(when) ? undefined : Math.max(0, (when - Date.now()) / 1000);
}

async function readCapped(url: string, res: Response, opts: GetOptions, onBytes: () => void): Promise<Uint8Array> {
  // An encoded body's Content-Length counts the encoded bytes, not the decoded ones read here: it is no
  // size to compare with. A cut-off is then caught by the runtime (the connection closed before that
  // length) or by the decoder (the stream ends early), both thrown while reading.
  const declared = contentEncoding(res) ? NaN : Number(res.headers.get("content-length") ?? NaN);
  const total = Number.isFinite(declared) ? declared : undefined;
  const tooBig = () => new CrateError("hostile", `${url}: larger than ${opts.limitName} (${opts.maxBytes} bytes)`);
  if (total !== undefined && total > opts.maxBytes) {
    await res.body?.cancel();
    throw tooBig();
  }
  const chunks: Uint8Array[] = [];
  const put = opts.sink ? final(opts.sink) : (chunk: Uint8Array) => void chunks.push(chunk);
  let received = 0;
  for await (const chunk of res.body ?? []) {
    received += chunk.byteLength;
    onBytes();
    if (received > opts.maxBytes) throw tooBig();
    final(() => put(chunk));
    opts.onProgress?.(received, total);
  }
  if (total !== undefined && received !== total) throw new Retryable(`transfer cut off at ${received} of ${total} bytes`);
  return chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks));
}

/** What the sink throws (a refused entry, a full disk) ends the get: it is not a network failure to retry. */
function final<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw asCrateError(err);
  }
}

/** Aborts its signal once `seconds` pass without a restart(); the reason is the number of seconds. */
class IdleTimer {
  private readonly ctl = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly seconds: number) {
    this.restart();
  }

  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.ctl.abort(this.seconds), this.seconds * 1000);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
