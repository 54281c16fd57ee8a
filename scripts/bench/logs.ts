// Benchmark: what the model reads of a build or test log (SPEC §7). For each tool's log
// (tests/log-samples.ts, long, failures in the middle) the tokens the model is sent and whether it sees
// every failure, message, location and total: Tendril's digest, Tendril's raw output (whole under the
// 50 KiB inline cap, else the last 8 KiB), and the policies of two peers as measured on their wire
// (Claude Code: whole under 30,000 characters, else a 2 KB preview; codex: 38 KB kept, its head and
// tail). Then the digest's own cost on 10 MB of log against the floor of splitting it into lines.
// `npm run bench -- logs`.
import { SAMPLES, vitestLog, type LogSample } from "../../tests/log-samples.ts";
import { digestOutput } from "../../tools/dev/output-digest.ts";
import { tailBytes, headBytes } from "../../core/text-bounds.ts";
import { median, note } from "./harness.ts";

const tokens = (s: string) => Math.ceil(Buffer.byteLength(s) / 4);

/** What each agent sends the model of one command's output (Tendril's digest and raw output, and two
 *  peers' policies as measured on their wire); the cost bench bills a session under each. */
export const POLICIES: [string, (s: string) => string][] = [
  ["tendril digest", (s) => (Buffer.byteLength(s) > 8 * 1024 ? digestOutput(s).text : s)],
  ["tendril raw", (s) => (Buffer.byteLength(s) <= 50 * 1024 ? s : tailBytes(s, 8 * 1024))],
  ["claude code", (s) => (s.length <= 30_000 ? s : s.slice(0, 2000))],
  ["codex", (s) => (Buffer.byteLength(s) <= 38 * 1024 ? s : `${headBytes(s, 19 * 1024)}\n…\n${tailBytes(s, 19 * 1024)}`)],
];

export async function run(): Promise<void> {
  const samples: LogSample[] = [vitestLog(900), ...SAMPLES.slice(1).map((m) => m())];
  note("\n## logs: what the model is sent of each log (tokens ≈ bytes/4) and whether every failure, message, location and total is in view");
  const totals = new Map<string, { tokens: number; seen: number }>();
  for (const s of samples) {
    const cells = POLICIES.map(([name, policy]) => {
      const sent = policy(s.text);
      const seen = s.mustSee.every((m) => sent.includes(m));
      const t = totals.get(name) ?? { tokens: 0, seen: 0 };
      totals.set(name, { tokens: t.tokens + tokens(sent), seen: t.seen + (seen ? 1 : 0) });
      return `${name} ${String(tokens(sent)).padStart(6)}${seen ? " ✓" : " ✗"}`;
    });
    note(`  ${s.name.padEnd(13)} raw ${String(tokens(s.text)).padStart(6)} | ${cells.join(" | ")}`);
  }
  const digest = totals.get("tendril digest")!;
  for (const [name, t] of totals) note(`  ${name.padEnd(15)} ${String(t.tokens).padStart(7)} tokens in all, every failure in view in ${t.seen} of ${samples.length} logs (digest ×${(digest.tokens / t.tokens).toFixed(2)} of it)`);
  // The digest's own cost: 10 MB of a test runner's coloured output.
  const parts: string[] = [];
  let size = 0;
  while (size < 10 * 1024 * 1024) {
    const t = vitestLog(2000).text;
    parts.push(t);
    size += t.length;
  }
  const log = parts.join("");
  const floor: number[] = [];
  const took: number[] = [];
  let rss = 0;
  for (let i = 0; i < 5; i++) {
    let t0 = performance.now();
    log.split("\n");
    floor.push(performance.now() - t0);
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    t0 = performance.now();
    digestOutput(log);
    took.push(performance.now() - t0);
    rss = Math.max(rss, process.memoryUsage().rss - before);
  }
  note(`  digest of 10 MB of log: median ${median(took).toFixed(0)} ms (goal ≤ 150), ${(rss / 1048576).toFixed(0)} MB more RSS at most (goal ≤ 30); splitting it into lines alone ${median(floor).toFixed(0)} ms (×${(median(took) / median(floor)).toFixed(1)})`);
}
