// Benchmark: one `shell` call of `true` (the dev tool in process, through the execution seam) unconfined
// and under sandbox = "workspace-write", beside the floor: `bwrap` with the same arguments running `true`
// alone (no process-group gate, no watchdog, no TMPDIR). Goal: the sandbox adds ≤ 1.25× the floor's cost.
// Also: a call under sandbox_allow_domains (its proxy and in-sandbox forwarder), the proxy's cost per
// HTTP request (in process, and from inside the sandbox with curl), and an idle agent's memory with the
// sandbox on and off (goal: unchanged).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { checkGit, GitGuard, snapshotGit } from "../../tools/dev/git-watch.ts";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GroupExecutor } from "../../tools/dev/exec.ts";
import { bwrapArgs, findBwrap, hiddenPaths, sandboxLauncher, type SandboxSettings } from "../../tools/dev/sandbox.ts";
import { homeView } from "../../tools/dev/sandbox-home.ts";
import { bwrapDisablesUserns } from "../../tools/dev/sandbox-args.ts";
import { ShellTool } from "../../tools/dev/shell.ts";
import { startEgressProxy } from "../../tools/dev/egress-proxy.ts";
import { openIdleAgent } from "./footprint.ts";
import { compareFns, report } from "./harness.ts";

const BIN = join(import.meta.dir, "..", "..", "dist", "tendril");

/** One GET of `path` from a loopback server, directly or through a proxy at `proxyPort`. */
function get(port: number, path: string, proxyPort?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const opts = proxyPort === undefined ? { host: "127.0.0.1", port, path } : { host: "127.0.0.1", port: proxyPort, path: `http://127.0.0.1:${port}${path}` };
    const req = request({ ...opts, agent: false }, (res) => {
      res.resume();
      res.once("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.once("error", reject);
    req.end();
  });
}

/** RSS of an idle `tendril agent` (initialize + one session/new) under a sandbox setting, in KiB. */
async function idleAgentRssKb(mode: string, home: string): Promise<number> {
  const { agent } = await openIdleAgent(home, { TENDRIL_SANDBOX: mode });
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${agent.pid}/status`, "utf8"))?.[1] ?? 0);
  } finally {
    agent.stdin.end();
    await new Promise((r) => agent.once("exit", r));
  }
}

const LIMITS = {
  inlineBytes: 50 * 1024,
  inlineLines: 2000,
  tailBytes: 8192,
  captureBytes: 10 * 1024 * 1024,
  defaultTimeoutS: 60,
  maxTimeoutS: 600,
  artifacts: 8,
  maxRunning: 16,
};

function spawnTrue(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/** The git check on a 10,000-folder workspace: the walk before and the check after a command, beside the
 *  floor of reading every folder once (readdir alone). Goal: ≤ 10 ms a call. */
async function gitCheck(scratch: string): Promise<void> {
  const ws = join(scratch, "git-ws");
  for (let i = 0; i < 100; i++) for (let j = 0; j < 100; j++) mkdirSync(join(ws, `d${i}`, `e${j}`), { recursive: true });
  spawnSync("git", ["init", "-q", ws]);
  // The guard as the sandbox keeps it: its first walk (watching every folder) is paid here, once.
  const guard = new GitGuard([ws], 20_000);
  guard.after(guard.before(), join(scratch, "q"), Date.now());
  const readAll = () => {
    const q = [ws];
    for (let i = 0; i < q.length; i++) for (const e of readdirSync(q[i]!, { withFileTypes: true })) if (e.isDirectory()) q.push(join(q[i]!, e.name));
  };
  await compareFns(
    "sandbox: the git check on a 10,000-folder workspace (goal ≤ 10 ms a call)",
    [
      { name: "floor: readdir of every folder once", fn: async () => readAll() },
      { name: "git check: walk before + check after", fn: async () => void checkGit(snapshotGit([ws], 20_000), [ws], 20_000, join(scratch, "q"), Date.now()) },
      { name: "git check with its memory, a command that changed nothing", fn: async () => void guard.after(guard.before(), join(scratch, "q"), Date.now()) },
    ],
    10,
  );
  guard.close();
}

export async function run(): Promise<void> {
  let bwrap: string;
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "tendril-bench-sandbox-")));
  const root = join(scratch, "ws");
  const tmp = join(scratch, "tmp");
  mkdirSync(root);
  mkdirSync(tmp);
  const settings: SandboxSettings = { mode: "workspace-write", network: false, hide: [], allowDomains: [] };
  await gitCheck(scratch);
  try {
    bwrap = findBwrap(process.env.PATH, root, settings.mode);
  } catch (err) {
    console.log(`\n## sandbox: skipped (${(err as Error).message.split(".")[0]})`);
    return;
  }
  const ctx = { settings, root, pathVar: process.env.PATH, home: process.env.HOME, configDir: join(process.env.HOME ?? "/", ".config", "tendril") };
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" };
  const plain = new ShellTool({ root, env, artifactDir: join(scratch, "a1"), limits: LIMITS });
  const boxed = new ShellTool({ root, env, artifactDir: join(scratch, "a2"), limits: LIMITS, executor: new GroupExecutor(sandboxLauncher(ctx)) });
  // The floor has the same mounts and namespaces but no seccomp filter (which needs the /bin/sh that opens
  // it on a descriptor): the filter's cost is part of what the sandbox adds.
  const confinedArgs = bwrapArgs(settings, { root, cwd: root, tmp, hidden: hiddenPaths(settings, ctx.home, ctx.configDir), home: homeView(ctx.home, env.PATH), disableUserns: bwrapDisablesUserns(bwrap) });
  const seccompAt = confinedArgs.indexOf("--seccomp");
  const floorArgs = [...confinedArgs.filter((_, i) => i !== seccompAt && i !== seccompAt + 1), "--", "true"];
  const signal = new AbortController().signal;
  const call = async (tool: ShellTool) => {
    const r = await tool.call({ command: "true" }, signal);
    if (r.isError || (r.structured?.exit_code as number) !== 0) throw new Error(`shell call failed: ${r.text}`);
  };
  try {
    const rows = await compareFns(
      "sandbox: one `shell` call of `true` (in process)",
      [
        { name: "shell, sandbox = off", fn: () => call(plain) },
        { name: "shell, sandbox = workspace-write", fn: () => call(boxed) },
        { name: "floor: bwrap (same mounts) true", fn: () => spawnTrue(bwrap, floorArgs) },
        { name: "bash -c true (spawn alone)", fn: () => spawnTrue("bash", ["-c", "true"]) },
      ],
      30,
    );
    const [off, on, floor] = rows;
    const added = on!.medianMs - off!.medianMs;
    report("sandbox: cost the sandbox adds to a call, against the floor (goal ≤ ×1.25)", [
      { name: "floor: bwrap … true", medianMs: floor!.medianMs, minMs: floor!.minMs },
      { name: "added by the sandbox (workspace-write − off)", medianMs: added, minMs: on!.minMs - off!.minMs },
    ]);
    await allowDomainsCases(ctx, root, scratch, env, call);
    await idleMemory(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** sandbox_allow_domains: a call's start cost with the proxy and forwarder, and each request's cost. */
async function allowDomainsCases(
  ctx: Parameters<typeof sandboxLauncher>[0],
  root: string,
  scratch: string,
  env: Record<string, string>,
  call: (tool: ShellTool) => Promise<void>,
): Promise<void> {
  if (!existsSync(BIN)) {
    console.log("\n## sandbox_allow_domains: skipped (run `npm run build` first: the forwarder is the binary)");
    return;
  }
  const web: Server = createServer((_req, res) => res.end("ok\n"));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  const port = (web.address() as { port: number }).port;
  const proxy = await startEgressProxy(0, [`127.0.0.1:${port}`]);
  const proxied = { ...ctx, settings: { ...ctx.settings, allowDomains: [`127.0.0.1:${port}`] }, self: { command: BIN, args: [] } };
  const boxed = new ShellTool({ root, env, artifactDir: join(scratch, "a3"), limits: LIMITS, executor: new GroupExecutor(sandboxLauncher(ctx)) });
  const viaProxy = new ShellTool({ root, env, artifactDir: join(scratch, "a4"), limits: LIMITS, executor: new GroupExecutor(sandboxLauncher(proxied)) });
  const networked = { ...ctx, settings: { ...ctx.settings, network: true } };
  const withNet = new ShellTool({ root, env, artifactDir: join(scratch, "a6"), limits: LIMITS, executor: new GroupExecutor(sandboxLauncher(networked)) });
  const plain = new ShellTool({ root, env, artifactDir: join(scratch, "a5"), limits: LIMITS });
  const N = 20;
  const curls = `for i in $(seq ${N}); do curl -sf http://127.0.0.1:${port}/ >/dev/null || exit 1; done`;
  const signal = new AbortController().signal;
  const curlCall = async (tool: ShellTool) => {
    const r = await tool.call({ command: curls }, signal);
    if ((r.structured?.exit_code as number) !== 0) throw new Error(`curl loop failed: ${r.text}`);
  };
  try {
    await compareFns(
      "sandbox_allow_domains and sandbox_network: one `shell` call of `true` (proxy + in-sandbox forwarder; the unix-socket filter)",
      [
        { name: "workspace-write, no network", fn: () => call(boxed) },
        { name: "workspace-write, allow_domains", fn: () => call(viaProxy) },
        { name: "workspace-write, sandbox_network", fn: () => call(withNet) },
      ],
      20,
    );
    await compareFns(
      "sandbox_allow_domains: one HTTP GET to a loopback server, in process",
      [
        { name: "direct", fn: () => get(port, "/") },
        { name: "through the proxy", fn: () => get(port, "/", proxy.port) },
      ],
      200,
    );
    if (spawnSync("curl", ["--version"]).status === 0) {
      const rows = await compareFns(
        `sandbox_allow_domains: ${N} curl GETs in one command (per-request cost = difference / ${N})`,
        [
          { name: "off, direct", fn: () => curlCall(plain) },
          { name: "allow_domains, through forwarder + proxy", fn: () => curlCall(viaProxy) },
        ],
        8,
      );
      const perReq = (rows[1]!.medianMs - rows[0]!.medianMs) / N;
      console.log(`  per request through the sandbox's proxy: +${perReq.toFixed(2)} ms over a direct curl`);
    }
  } finally {
    await proxy.close();
    web.close();
  }
}

/** An idle agent's RSS, sandbox off against workspace-write (goal: unchanged). */
async function idleMemory(scratch: string): Promise<void> {
  if (!existsSync(BIN)) return;
  const rows = [];
  for (const mode of ["off", "workspace-write"]) {
    const kb: number[] = [];
    for (let i = 0; i < 3; i++) {
      const home = join(scratch, `home-${mode}-${i}`);
      mkdirSync(home);
      kb.push(await idleAgentRssKb(mode, home));
    }
    kb.sort((a, b) => a - b);
    rows.push({ name: `idle agent, sandbox = ${mode}`, medianMs: kb[1]! / 1024, minMs: kb[0]! / 1024 });
  }
  report("sandbox: an idle agent's RSS after initialize + session/new (goal: unchanged)", rows, "MiB");
}

if (import.meta.main) await run();
