// Benchmark: `tendril conductor` beside a raw pipe (the floor) and the published TypeScript conductor
// @thinkwell/conductor, through 0, 1 and 3 pass-through proxies (tests/fixtures/raw-proxy.ts in the
// sacp dialect, the one both conductors speak) in front of tests/fixtures/burst-agent.ts; and the
// crate-sources proxy (the proxy library) spawned and run in-process (`tendril:crate-sources`), each
// against the conductor with no component: what one process hop costs, and what an in-process one does.
// Throughput: one session/prompt answered with BURST updates, timed from the request to the response.
// CPU: the user + system time of the chain's processes (not the agent's) per relayed message over one
// burst, from /proc, which scheduling on a 2-core machine moves far less than latency.
// Latency: sequential `_echo` round trips; the goals' comparisons use chains measured interleaved, block
// by block, so the machine's drift falls on all of them alike. Figures and ratios are printed; nothing
// is asserted.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { join } from "node:path";
import { Chain, type HopIo } from "../../core/conductor/router.ts";
import { Proxy } from "../../core/conductor/proxy.ts";
import { bytePipe } from "../../core/wire/byte-pipe.ts";
import { Link } from "../../core/wire/link.ts";
import { messagePipe } from "../../core/wire/message-pipe.ts";
import { readFileSync } from "node:fs";
import { threadsCpuMs } from "./agent.ts";
import { processTree } from "./footprint.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "dist", "tendril");
const BUN = process.execPath;
const PROXY = `DIALECT=sacp ${BUN} ${join(ROOT, "tests", "fixtures", "raw-proxy.ts")}`;
const AGENT = `${BUN} ${join(ROOT, "tests", "fixtures", "burst-agent.ts")}`;
const PEER = join(import.meta.dir, "peers", "thinkwell-conductor.ts");
const RELAY = join(import.meta.dir, "peers", "byte-relay.ts");
const BOUNCE = join(import.meta.dir, "peers", "byte-bounce.ts");
const BURST = Number(process.env.TENDRIL_BENCH_BURST ?? 50_000);
const ROUND_TRIPS = Number(process.env.TENDRIL_BENCH_ROUND_TRIPS ?? 2000);
const RUNS = Number(process.env.TENDRIL_BENCH_RUNS ?? 3);
const WARM_ROUND_TRIPS = Number(process.env.TENDRIL_BENCH_WARM ?? 5000);

interface Subject {
  name: string;
  /** Proxies in the chain; -1 the raw pipe, -2 the byte relay, -3 the byte bounce. */
  proxies: number;
  argv: string[];
}

/** A spawned chain with a line counter on its stdout. */
class Driver {
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  #lines = 0;
  #waiter?: { count: number; resolve: () => void };
  #last = "";

  constructor(argv: string[]) {
    this.child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, BURST: String(BURST), TENDRIL_LOG: "error" } });
    this.child.stdout.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.#lines++;
      this.#last = chunk.toString("utf8", Math.max(0, chunk.length - 200));
      if (this.#waiter && this.#lines >= this.#waiter.count) this.#waiter.resolve();
    });
  }

  send(m: object): void {
    this.child.stdin.write(JSON.stringify(m) + "\n");
  }

  /** Resolves once `n` more lines have arrived (20 s bound). */
  lines(n: number): Promise<void> {
    const count = this.#lines + n;
    if (this.#lines >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${n} lines; last: ${this.#last}`)), 20_000);
      this.#waiter = { count, resolve: () => (clearTimeout(t), (this.#waiter = undefined), resolve()) };
    });
  }

  close(): void {
    this.child.stdin.end();
    setTimeout(() => this.child.kill("SIGKILL"), 3000).unref();
  }
}

async function measure(s: Subject): Promise<{ msgsPerS: number; rttMs: number }> {
  const d = new Driver(s.argv);
  try {
    d.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await d.lines(1);
    for (let i = 0; i < 200; i++) (d.send({ jsonrpc: "2.0", id: `w${i}`, method: "_echo", params: { i } }), await d.lines(1));
    const t0 = performance.now();
    for (let i = 0; i < ROUND_TRIPS; i++) {
      d.send({ jsonrpc: "2.0", id: i, method: "_echo", params: { i } });
      await d.lines(1);
    }
    const rttMs = (performance.now() - t0) / ROUND_TRIPS;
    const t1 = performance.now();
    d.send({ jsonrpc: "2.0", id: "p", method: "session/prompt", params: { sessionId: "burst-1", prompt: [] } });
    await d.lines(BURST + 2);
    const msgsPerS = BURST / ((performance.now() - t1) / 1000);
    return { msgsPerS, rttMs };
  } finally {
    d.close();
  }
}

/** The chain's processes but the agent at its end (the same burst agent behind every subject). */
function relayingPids(root: number): number[] {
  return processTree(root).filter((pid) => {
    try {
      // the agent runs the script itself (`bun …/burst-agent.ts`); a relay or conductor only names it
      return !readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[1]?.endsWith("burst-agent.ts");
    } catch {
      return false; // gone
    }
  });
}

/**
 * CPU per relayed message, in µs: the user + system time (every thread's, /proc schedstat) of the
 * chain's processes — the conductor and its proxies, or the relay — but not the agent, over one burst
 * of BURST updates, after a warming burst. Unlike latency, this does not move with scheduling on a
 * 2-core machine where the client, the chain and the agent compete for the cores.
 */
async function burstCpuUs(s: Subject): Promise<{ chain: number; own: number }> {
  const d = new Driver(s.argv);
  try {
    d.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await d.lines(1);
    const burst = async (id: string) => (d.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId: "burst-1", prompt: [] } }), await d.lines(BURST + 2));
    await burst("warm");
    const pids = relayingPids(d.child.pid!);
    const cpu = () => pids.map((pid) => threadsCpuMs(pid));
    const before = cpu();
    await burst("p");
    const used = cpu().map((ms, i) => ((ms - before[i]!) * 1000) / BURST);
    // `own`: the conductor's (or relay's) process alone, the first of the tree
    return { chain: used.reduce((a, b) => a + b, 0), own: used[0]! };
  } finally {
    d.close();
  }
}

/**
 * Round trips of several chains measured interleaved: all are started and warmed, then each in turn
 * answers a block of sequential `_echo`s, BLOCKS times over; a chain's figure is the median of its
 * block means. Drift of the machine (another process, the host) then lands on every chain alike, which
 * sequential runs of separate processes do not give: their medians move by ±0.05 ms run to run.
 */
async function interleavedRtt(argvs: string[][], blocks = 40, perBlock = 100): Promise<number[]> {
  const drivers = argvs.map((argv) => new Driver(argv));
  try {
    for (const d of drivers) {
      d.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
      await d.lines(1);
      // warmed until the JIT has compiled the path (a conductor lives as long as an editor session)
      for (let i = 0; i < WARM_ROUND_TRIPS; i++) (d.send({ jsonrpc: "2.0", id: `w${i}`, method: "_echo", params: { i } }), await d.lines(1));
    }
    const means: number[][] = argvs.map(() => []);
    for (let b = 0; b < blocks; b++) {
      for (const [k, d] of drivers.entries()) {
        const t0 = performance.now();
        for (let i = 0; i < perBlock; i++) (d.send({ jsonrpc: "2.0", id: i, method: "_echo", params: { i } }), await d.lines(1));
        means[k]!.push((performance.now() - t0) / perBlock);
      }
    }
    return means.map(median);
  } finally {
    for (const d of drivers) d.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<void> {
  const chain = (n: number) => Array.from({ length: n }, () => PROXY);
  const subjects: Subject[] = [
    { name: "raw pipe (floor)", proxies: -1, argv: ["sh", "-c", `exec ${AGENT}`] },
    // one process that only copies bytes, in front of the agent: the floor of any extra hop
    { name: "byte relay (floor of one hop)", proxies: -2, argv: [BUN, RELAY, ...AGENT.split(" ")] },
    // the relay sending each direction through one more process and back, as a conductor does through a
    // proxy: what it adds over the relay is the floor of a proxy hop
    { name: "byte bounce (floor of a proxy hop)", proxies: -3, argv: [BUN, BOUNCE, ...AGENT.split(" ")] },
  ];
  for (const n of [0, 1, 3]) subjects.push({ name: `tendril conductor, ${n} prox${n === 1 ? "y" : "ies"}`, proxies: n, argv: [BIN, "conductor", "agent", ...chain(n), AGENT] });
  // the same proxy-library component, as its own process and inside the conductor
  subjects.push({ name: "tendril conductor, crate-sources spawned", proxies: 1, argv: [BIN, "conductor", "agent", `${BIN} crate-fetch --proxy`, AGENT] });
  subjects.push({ name: "tendril conductor, tendril:crate-sources", proxies: 1, argv: [BIN, "conductor", "agent", "tendril:crate-sources", AGENT] });
  let peer = true;
  try {
    await import("@thinkwell/conductor");
  } catch {
    peer = false;
    console.log("\n(@thinkwell/conductor is not installed: the peer rows are skipped)");
  }
  if (peer) {
    // its command strings take no NAME=value words, so the proxy's dialect goes through env(1)
    for (const n of [0, 1, 3]) {
      subjects.push({ name: `@thinkwell/conductor, ${n} prox${n === 1 ? "y" : "ies"}`, proxies: n, argv: [BUN, PEER, ...chain(n).map((c) => `env ${c}`), AGENT] });
    }
  }
  const results = new Map<string, { msgs: number[]; rtt: number[] }>();
  for (let r = 0; r < RUNS; r++) {
    for (const s of subjects) {
      const m = await measure(s);
      const acc = results.get(s.name) ?? { msgs: [], rtt: [] };
      acc.msgs.push(m.msgsPerS);
      acc.rtt.push(m.rttMs);
      results.set(s.name, acc);
    }
  }
  console.log(`\n## conductor: ${BURST} updates per burst, ${ROUND_TRIPS} sequential round trips, median of ${RUNS} runs`);
  const floor = results.get(subjects[0]!.name)!;
  const floorRtt = median(floor.rtt);
  const zero = new Map<string, number>();
  for (const s of subjects) {
    const acc = results.get(s.name)!;
    const msgs = median(acc.msgs);
    const rtt = median(acc.rtt);
    const family = s.name.split(",")[0]!;
    if (s.proxies === 0) zero.set(family, rtt);
    const relay = results.get("byte relay (floor of one hop)");
    const base = s.proxies > 0 ? zero.get(family) : s.proxies === 0 || s.proxies === -2 ? floorRtt : s.proxies === -3 && relay ? median(relay.rtt) : undefined;
    const what = s.proxies === 0 ? " (conductor)" : s.proxies === -2 ? " (one process)" : s.proxies === -3 ? " (over the relay)" : "";
    const perHop = base === undefined ? "" : `  added ${((rtt - base) / Math.max(1, s.proxies)).toFixed(3)} ms/hop${what}`;
    console.log(
      `  ${s.name.padEnd(40)} ${Math.round(msgs).toLocaleString("en-US").padStart(9)} msgs/s  ×${(msgs / median(floor.msgs)).toFixed(2)}   rtt ${rtt.toFixed(3)} ms${perHop}`,
    );
  }
  // The goals of issue 26, from round trips measured interleaved (see interleavedRtt).
  const byName = (name: string) => subjects.find((s) => s.name === name)!.argv;
  const goalRows = ["raw pipe (floor)", "byte relay (floor of one hop)", "byte bounce (floor of a proxy hop)", "tendril conductor, 0 proxies", "tendril conductor, 1 proxy", "tendril conductor, crate-sources spawned", "tendril conductor, tendril:crate-sources"];
  const paired = await interleavedRtt(goalRows.map(byName));
  const rttOf = (name: string) => paired[goalRows.indexOf(name)]!;
  console.log(`  interleaved round trips (median of 40 blocks of 100): ${goalRows.map((n) => `${n} ${rttOf(n).toFixed(3)} ms`).join("; ")}`);
  const relayRtt = rttOf("byte relay (floor of one hop)");
  const relayAdds = relayRtt - rttOf("raw pipe (floor)");
  const base = rttOf("tendril conductor, 0 proxies");
  const spawnedAdds = rttOf("tendril conductor, crate-sources spawned") - base;
  const rawAdds = rttOf("tendril conductor, 1 proxy") - base;
  const inProcessAdds = rttOf("tendril conductor, tendril:crate-sources") - base;
  // A proxy hop is one more process and, each way, two more pipe transits (conductor → proxy → conductor);
  // the byte relay is one more process and one more transit: both ratios are printed.
  const bounceAdds = rttOf("byte bounce (floor of a proxy hop)") - relayRtt;
  console.log(
    `  one spawned hop adds ${rawAdds.toFixed(3)} ms (raw proxy) / ${spawnedAdds.toFixed(3)} ms (proxy library): ×${(rawAdds / relayRtt).toFixed(2)} / ×${(spawnedAdds / relayRtt).toFixed(2)} the byte relay's round trip (${relayRtt.toFixed(3)} ms), ×${(rawAdds / relayAdds).toFixed(2)} / ×${(spawnedAdds / relayAdds).toFixed(2)} what the relay adds (${relayAdds.toFixed(3)} ms), ×${(rawAdds / bounceAdds).toFixed(2)} / ×${(spawnedAdds / bounceAdds).toFixed(2)} what the bounce adds over the relay (${bounceAdds.toFixed(3)} ms: the same extra process and transits with no JSON)`,
  );
  console.log(`  one in-process component (tendril:crate-sources) adds ${inProcessAdds.toFixed(3)} ms per round trip`);
  const cpu = await inProcessCpu();
  console.log(
    `  in one process (client and agent in memory, CPU time, free of scheduling noise): a round trip costs ${cpu.none.toFixed(4)} ms with no component, ${cpu.proxy.toFixed(4)} ms through an in-process proxy-library component: it adds ${(cpu.proxy - cpu.none).toFixed(4)} ms`,
  );
  // CPU per relayed message (issue 38's second conductor measure): medians of RUNS bursts, the subjects interleaved.
  const cpuRows = ["byte relay (floor of one hop)", "byte bounce (floor of a proxy hop)", "tendril conductor, 0 proxies", "tendril conductor, 1 proxy", "tendril conductor, crate-sources spawned"];
  if (peer) cpuRows.push("@thinkwell/conductor, 0 proxies", "@thinkwell/conductor, 1 proxy");
  const cpuRuns: { chain: number; own: number }[][] = cpuRows.map(() => []);
  for (let r = 0; r < RUNS; r++) for (const [k, name] of cpuRows.entries()) cpuRuns[k]!.push(await burstCpuUs(subjects.find((s) => s.name === name)!));
  const cpuOf = (name: string) => median(cpuRuns[cpuRows.indexOf(name)]!.map((c) => c.chain));
  const ownOf = (name: string) => median(cpuRuns[cpuRows.indexOf(name)]!.map((c) => c.own));
  console.log(`  CPU per relayed message (the chain's processes but the agent, /proc, one burst of ${BURST}, median of ${RUNS}; of it the conductor's or relay's own process):`);
  for (const name of cpuRows) console.log(`    ${name.padEnd(40)} ${cpuOf(name).toFixed(2).padStart(7)} µs  (own ${ownOf(name).toFixed(2)} µs)`);
  const relayCpu = cpuOf("byte relay (floor of one hop)");
  const hopCpu = cpuOf("tendril conductor, 1 proxy") - cpuOf("tendril conductor, 0 proxies");
  const libHopCpu = cpuOf("tendril conductor, crate-sources spawned") - cpuOf("tendril conductor, 0 proxies");
  const bounceCpu = cpuOf("byte bounce (floor of a proxy hop)");
  console.log(
    `  one spawned hop's CPU per message: ${hopCpu.toFixed(2)} µs (raw proxy) / ${libHopCpu.toFixed(2)} µs (proxy library), ×${(hopCpu / relayCpu).toFixed(1)} / ×${(libHopCpu / relayCpu).toFixed(1)} the byte relay's (${relayCpu.toFixed(2)} µs), ×${(hopCpu / bounceCpu).toFixed(1)} / ×${(libHopCpu / bounceCpu).toFixed(1)} the byte bounce's (${bounceCpu.toFixed(2)} µs; neither parses a message)`,
  );
  if (peer) {
    console.log(`  CPU per message through one proxy: ×${(cpuOf("tendril conductor, 1 proxy") / cpuOf("@thinkwell/conductor, 1 proxy")).toFixed(2)} @thinkwell/conductor's`);
    const msgsOf = (name: string) => median(results.get(name)!.msgs);
    console.log(`  throughput through one proxy: ×${(msgsOf("tendril conductor, 1 proxy") / msgsOf("@thinkwell/conductor, 1 proxy")).toFixed(2)} @thinkwell/conductor's`);
  }
}

/** CPU time per sequential round trip through a Chain in this process, with and without an in-process Proxy. */
async function inProcessCpu(): Promise<{ none: number; proxy: number }> {
  const pair = () => {
    const a = bytePipe();
    const b = bytePipe();
    return { near: { input: a.input, sink: b.sink }, far: { input: b.input, sink: a.sink } };
  };
  const once = async (withProxy: boolean): Promise<number> => {
    const client = pair();
    const agent = pair();
    const components: HopIo[] = [agent.near];
    if (withProxy) {
      // as the conductor runs a `tendril:NAME` component: on a message pipe
      const [chainEnd, componentEnd] = messagePipe();
      new Proxy({ port: componentEnd }, { maxLineBytes: 1 << 20 });
      components.unshift({ port: chainEnd });
    }
    new Chain({ mode: "agent", client: client.near, components, maxLineBytes: 1 << 20 });
    const agentLink: Link = new Link({
      ...agent.far,
      maxLineBytes: 1 << 20,
      onMessage: (m) => void (m.kind === "request" && agentLink.send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1 } })),
    });
    let answered = () => {};
    const clientLink = new Link({ ...client.far, maxLineBytes: 1 << 20, onMessage: () => answered() });
    const ask = (id: number, method: string) => new Promise<void>((r) => ((answered = r), clientLink.send({ jsonrpc: "2.0", id, method, params: { id } })));
    await ask(0, "initialize");
    for (let i = 1; i <= 500; i++) await ask(i, "_echo");
    const c0 = process.cpuUsage();
    for (let i = 0; i < ROUND_TRIPS * 2; i++) await ask(1000 + i, "_echo");
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000 / (ROUND_TRIPS * 2);
  };
  const none: number[] = [];
  const proxy: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    none.push(await once(false));
    proxy.push(await once(true));
  }
  return { none: median(none), proxy: median(proxy) };
}

if (import.meta.main) await run();
