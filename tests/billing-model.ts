// Owns a fake provider's bill: Anthropic's and OpenAI's prompt-cache billing applied to a session's
// recorded requests (SPEC §3.9), for `npm run bench -- cost` and its arithmetic test. Anthropic: cache
// entries written at breakpoints (1.25× input), read back (0.1×) when a breakpoint or one of the ~20
// block boundaries before it ends where an entry ends; OpenAI: automatic, the longest prefix an earlier
// request sent, from 1,024 tokens in 128-token steps, read at 0.1×. Tokens are estimated as bytes / 4.
import { createHash } from "node:crypto";

/** One cacheable unit of a prompt in order: its content (as the API sees it) and its size. */
export interface PromptBlock {
  key: string;
  tokens: number;
  /** Anthropic: the block carries `cache_control`. */
  breakpoint?: boolean;
}

export interface Bill {
  /** Input tokens billed at the base price. */
  uncached: number;
  written: number;
  read: number;
  /** uncached × 1 + written × writeRate + read × readRate. */
  units: number;
}

export const RATES = { write: 1.25, read: 0.1 } as const;

export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text) / 4);
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Prefix hashes: entry i names blocks 0..i (a cache entry is a whole prefix, never a block alone). */
function prefixHashes(blocks: PromptBlock[]): string[] {
  let h = "";
  return blocks.map((b) => (h = createHash("sha256").update(h).update("\0").update(b.key).digest("hex")));
}

/** Anthropic's prompt cache over one session's requests, in order (entries never expire here). */
export function billAnthropic(requests: PromptBlock[][], opts: { minTokens?: number; lookback?: number } = {}): Bill & { perRequest: Bill[] } {
  const minTokens = opts.minTokens ?? 1024;
  const lookback = opts.lookback ?? 20;
  const cache = new Set<string>();
  const perRequest = requests.map((blocks) => {
    const hashes = prefixHashes(blocks);
    const ends: number[] = [];
    blocks.reduce((acc, b, i) => (ends[i] = acc + b.tokens), 0);
    const total = ends.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    // The longest cached prefix ending at a breakpoint or within `lookback` blocks before one.
    let hit = -1;
    for (const bp of breakpoints) {
      for (let p = bp; p >= Math.max(0, bp - lookback); p--) {
        if (p > hit && cache.has(hashes[p]!)) hit = p;
      }
    }
    const read = hit >= 0 ? ends[hit]! : 0;
    const last = breakpoints.at(-1);
    let written = 0;
    if (last !== undefined && last > hit && ends[last]! >= minTokens) written = ends[last]! - read;
    for (const bp of breakpoints) if (ends[bp]! >= minTokens) cache.add(hashes[bp]!);
    const uncached = total - read - written;
    return { uncached, written, read, units: uncached + written * RATES.write + read * RATES.read };
  });
  return { ...totals(perRequest), perRequest };
}

/** OpenAI's automatic prefix cache: the longest prefix (block by block) any earlier request sent. */
export function billOpenAi(requests: PromptBlock[][], opts: { minTokens?: number; step?: number } = {}): Bill & { reusable: number; prompt: number } {
  const minTokens = opts.minTokens ?? 1024;
  const step = opts.step ?? 128;
  const seen: string[][] = [];
  const perRequest: Bill[] = [];
  let reusable = 0;
  for (const blocks of requests) {
    const hashes = prefixHashes(blocks);
    let common = 0; // tokens of the longest prefix an earlier request sent
    for (const earlier of seen) {
      let n = 0;
      let tokens = 0;
      while (n < blocks.length && n < earlier.length && earlier[n] === hashes[n]) tokens += blocks[n++]!.tokens;
      common = Math.max(common, tokens);
    }
    seen.push(hashes);
    reusable += common;
    const read = common >= minTokens ? Math.floor(common / step) * step : 0;
    const uncached = sum(blocks.map((b) => b.tokens)) - read;
    perRequest.push({ uncached, written: 0, read, units: uncached + read * RATES.read });
  }
  return { ...totals(perRequest), reusable, prompt: sum(requests.map((r) => sum(r.map((b) => b.tokens)))) };
}

/** The floor: every prompt token written once and read by every later request (each request's prompt
 *  extends the one before it). */
export function floorUnits(promptTokens: number[]): number {
  let units = 0;
  let before = 0;
  for (const p of promptTokens) {
    const fresh = Math.max(0, p - before);
    units += fresh * RATES.write + Math.min(before, p) * RATES.read;
    before = p;
  }
  return units;
}

function totals(bills: Bill[]): Bill {
  return {
    uncached: sum(bills.map((b) => b.uncached)),
    written: sum(bills.map((b) => b.written)),
    read: sum(bills.map((b) => b.read)),
    units: sum(bills.map((b) => b.units)),
  };
}

const withoutMarks = (v: unknown) => JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x));
const block = (v: unknown, breakpoint: boolean): PromptBlock => {
  const key = withoutMarks(v);
  return { key, tokens: estimateTokens(key), breakpoint };
};
const marked = (v: unknown) => typeof v === "object" && v !== null && "cache_control" in v;

/** An Anthropic Messages body as its cache sees it: tools, system blocks, then each message's blocks. */
export function anthropicBlocks(body: { tools?: unknown[]; system?: unknown; messages: { role: string; content: unknown }[] }): PromptBlock[] {
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : ((body.system as unknown[] | undefined) ?? []);
  return [
    ...(body.tools ?? []).map((t) => block(t, marked(t))),
    ...system.map((s) => block(s, marked(s))),
    ...body.messages.flatMap((m) => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content as unknown[])).map((b) => block({ role: m.role, b }, marked(b)))),
  ];
}

/** An OpenAI Chat body as its prefix cache sees it: the tools, then each message. */
export function openAiBlocks(body: { tools?: unknown[]; messages: unknown[] }): PromptBlock[] {
  return [block(body.tools ?? [], false), ...body.messages.map((m) => block(m, false))];
}
