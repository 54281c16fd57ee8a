// End-to-end tests of the `sandbox` setting (SPEC §3.8) through the built binary (`tendril dev-mcp`
// and `tendril agent --check-sandbox`) with the real bubblewrap: each rule with its escape attempt, the
// `off` control where the same commands succeed, kills inside the sandbox, and failing closed.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, runBin, runBinAsync } from "./binary.ts";
import { callTool, startDevMcp, stopDevMcps, textOf, type ToolResult } from "./dev-mcp-harness.ts";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { agentEnv } from "./agent-env.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";
import { BWRAP, requireBwrapUnderCi } from "./bwrap.ts";

requireBwrapUnderCi("tests/sandbox.test.ts");

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-sandbox-e2e-")));
const ws = join(base, "ws");
const secret = join(base, ".ssh", "id_rsa");
const credentials = join(base, "config", "tendril", "credentials.toml");
const extraSecret = join(base, "private", "token");
// Outside the writable roots and outside /tmp (private and writable inside, so a write there reaches nothing).
const outsideDir = realpathSync(mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : base, "tendril-sandbox-outside-")));
let server: Server;
let port = 0;

beforeAll(async () => {
  for (const d of [join(ws, ".git", "hooks"), join(base, ".ssh"), join(base, "config", "tendril"), join(base, "private")]) mkdirSync(d, { recursive: true });
  writeFileSync(join(ws, ".git", "config"), "[core]\n");
  writeFileSync(secret, "PRIVATE KEY\n");
  writeFileSync(credentials, "api_key = 'sk-test'\n");
  writeFileSync(extraSecret, "TOKEN\n");
  writeFileSync(join(ws, "notes.txt"), "needle in the workspace\n");
  symlinkSync(join(base, ".ssh"), join(ws, "planted"));
  // A loopback port the commands try to reach: the host's loopback is not the sandbox's.
  server = createServer((s) => s.end("hello\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});
afterEach(stopDevMcps);
afterAll(() => {
  server?.close();
  rmSync(base, { recursive: true, force: true });
  rmSync(outsideDir, { recursive: true, force: true });
});

const start = (sandbox: string, env: Record<string, string> = {}) => startDevMcp(ws, base, { TENDRIL_SANDBOX: sandbox, ...env });
const sh = async (client: Awaited<ReturnType<typeof start>>["client"], command: string, extra: Record<string, unknown> = {}) =>
  callTool(client, "shell", { command, ...extra });
const exitOf = (r: ToolResult) => r.structuredContent?.exit_code as number;

/** The escape attempts, each one command; under `off` every one succeeds. */
const attempts = () => ({
  writeOutside: `echo x > ${join(outsideDir, "outside.txt")}`,
  readSecret: `cat ${secret}`,
  readCredentials: `cat ${credentials}`,
  readHidden: `cat ${extraSecret}`,
  throughSymlink: "cat planted/id_rsa",
  // PID 1 of the host may not be ours to look through; our own root is the same view under `off`.
  throughProc: `cat /proc/1/root${secret} 2>/dev/null || cat /proc/self/root${secret}`,
  writeHook: "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
  writeGitConfig: "printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config",
  network: `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`,
});

function configWithHide(): Record<string, string> {
  const file = join(base, "sandbox-config.toml");
  writeFileSync(file, `sandbox_hide = ["~/private/token"]\n`);
  return { TENDRIL_CONFIG: file };
}

describe.skipIf(!BWRAP)("sandbox (bubblewrap)", () => {
  test("off: the control, every escape attempt succeeds", async () => {
    const { client } = await start("off", configWithHide());
    expect(client.getInstructions()).not.toContain("Shell commands run in a sandbox");
    for (const [name, command] of Object.entries(attempts())) {
      const r = await sh(client, command);
      expect({ name, exit: exitOf(r) }).toEqual({ name, exit: 0 });
    }
    expect(readFileSync(join(ws, ".git", "hooks", "pre-commit"), "utf8")).toContain("pwned");
    rmSync(join(ws, ".git", "hooks", "pre-commit"));
    writeFileSync(join(ws, ".git", "config"), "[core]\n");
    rmSync(join(outsideDir, "outside.txt"));
  });

  test("workspace-write: the workspace and TMPDIR are writable; each escape attempt fails and changes nothing", async () => {
    rmSync(join(outsideDir, "outside.txt"), { force: true });
    rmSync(join(ws, ".git", "hooks", "pre-commit"), { force: true });
    writeFileSync(join(ws, ".git", "config"), "[core]\n");
    const { client } = await start("workspace-write", configWithHide());
    const ok = await sh(client, 'echo made > made.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" made.txt && rg -n needle notes.txt');
    expect(exitOf(ok)).toBe(0);
    expect(ok.structuredContent?.stdout).toBe("t\nmade\n1:needle in the workspace\n");
    expect(readFileSync(join(ws, "made.txt"), "utf8")).toBe("made\n");
    for (const [name, command] of Object.entries(attempts())) {
      const r = await sh(client, command);
      expect({ name, exit: exitOf(r) === 0 }).toEqual({ name, exit: false });
      expect({ name, leaked: /PRIVATE KEY|sk-test|TOKEN|hello/.test(String(r.structuredContent?.stdout)) }).toEqual({ name, leaked: false });
    }
    // No way back to the hidden folder through a nested namespace, no capabilities, setuid binaries inert.
    const nested = await sh(client, `unshare -rm sh -c 'umount ${join(base, ".ssh")}; cat ${secret}'`);
    expect(String(nested.structuredContent?.stdout)).not.toContain("PRIVATE KEY");
    const privs = await sh(client, "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status");
    expect(privs.structuredContent?.stdout).toBe("CapEff:\t0000000000000000\nNoNewPrivs:\t1\n");
    expect(existsSync(join(outsideDir, "outside.txt"))).toBe(false);
    expect(existsSync(join(ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(ws, ".git", "config"), "utf8")).toBe("[core]\n");
    expect(readFileSync(secret, "utf8")).toBe("PRIVATE KEY\n");
  });

  test("the model is told the rules up front; a write the sandbox refuses fails with the system's own error and no sandbox line (A3: no retry on output text)", async () => {
    const { client } = await start("workspace-write");
    expect(client.getInstructions()).toContain('Shell commands run in a sandbox (sandbox = "workspace-write": writable: the workspace');
    expect(client.getInstructions()).toContain("~/.ssh");
    const r = await sh(client, `echo x > ${join(outsideDir, "outside.txt")}`);
    expect(textOf(r)).toContain("Read-only file system");
    expect(r.structuredContent?.sandbox_note).toBeUndefined();
    const plain = await sh(client, "exit 3");
    expect(exitOf(plain)).toBe(3);
    expect(textOf(plain)).not.toContain("sandbox:");
  });

  test("read-only: nothing is writable but the private TMPDIR, which is gone after the command", async () => {
    const { client } = await start("read-only");
    const r = await sh(client, "echo x > ro.txt");
    expect(exitOf(r)).not.toBe(0);
    expect(existsSync(join(ws, "ro.txt"))).toBe(false);
    const t = await sh(client, 'echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$TMPDIR"');
    expect(exitOf(t)).toBe(0);
    const dir = String(t.structuredContent?.stdout).split("\n")[1]!;
    expect(dir).toContain("tendril-sandbox-");
    expect(existsSync(dir)).toBe(false);
  });

  test("sandbox_network = true keeps the network", async () => {
    const file = join(base, "net.toml");
    writeFileSync(file, "sandbox_network = true\n");
    const { client } = await start("workspace-write", { TENDRIL_CONFIG: file });
    const r = await sh(client, attempts().network);
    expect(exitOf(r)).toBe(0);
    expect(r.structuredContent?.stdout).toBe("hello\n");
  });

  // Regression: only .git/hooks and .git/config were read-only, so a command could `mv .git .git-old`,
  // make a new .git whose config sets core.fsmonitor, and the user's next `git status` (or a git-aware
  // shell prompt) ran it unconfined. Submodules' git dirs and a worktree's .git file were not guarded.
  test("regression: .git renamed away and replaced by one whose config runs a command at the user's next git status; now the git dir and each submodule's cannot be swapped or configured, a .git file cannot be re-pointed, and commits still work", async () => {
    const git = (cwd: string, ...args: string[]) => {
      const r = Bun.spawnSync(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base } });
      if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
      return r.stdout.toString();
    };
    const repo = join(base, "repo");
    mkdirSync(repo);
    git(repo, "init", "-q", "-b", "main");
    git(repo, "commit", "-q", "--allow-empty", "-m", "first");
    // a submodule's git dir as git lays it out, and a linked worktree (its .git is a file)
    const lib = join(repo, ".git", "modules", "vendor", "lib");
    mkdirSync(join(lib, "objects"), { recursive: true });
    writeFileSync(join(lib, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(lib, "config"), "[core]\n\tbare = false\n");
    const wt = join(base, "repo-wt");
    git(repo, "worktree", "add", "-q", wt);
    const marker = join(base, "fsmonitor-ran");
    const plant = (dir: string) => `printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' > ${dir}/config`;
    const { client } = await startDevMcp(repo, base, { TENDRIL_SANDBOX: "workspace-write" });
    const attempts = {
      swapGitDir: `mv .git .git-old && mkdir -p .git && ${plant(".git")}`,
      appendConfig: `printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' >> .git/config`,
      swapSubmodule: "mv .git/modules/vendor/lib .git/modules/vendor/lib-old",
      submoduleConfig: plant(".git/modules/vendor/lib"),
      submoduleHook: "printf '#!/bin/sh\\ntouch /tmp/x\\n' > .git/modules/vendor/lib/hooks/post-checkout",
      worktreeCommondir: "echo /tmp > .git/worktrees/repo-wt/commondir",
    };
    for (const [name, command] of Object.entries(attempts)) {
      const r = await sh(client, command);
      expect({ name, failed: exitOf(r) !== 0 }).toEqual({ name, failed: true });
    }
    expect(existsSync(join(repo, ".git-old"))).toBe(false);
    expect(existsSync(join(lib, "config")) && readFileSync(join(lib, "config"), "utf8")).toBe("[core]\n\tbare = false\n");
    // commits still work inside
    const commit = await sh(client, "echo hi > f.txt && git add f.txt && git -c user.email=t@example.com -c user.name=t commit -qm second && echo done");
    expect({ exit: exitOf(commit), out: commit.structuredContent?.stdout }).toEqual({ exit: 0, out: "done\n" });
    expect(git(repo, "log", "--oneline").trim().split("\n")).toHaveLength(2);
    // the worktree's .git file cannot be re-pointed or removed
    const { client: inWt } = await startDevMcp(wt, base, { TENDRIL_SANDBOX: "workspace-write" });
    for (const command of ["echo 'gitdir: /tmp' > .git", "rm -f .git"]) expect({ command, failed: exitOf(await sh(inWt, command)) !== 0 }).toEqual({ command, failed: true });
    expect(readFileSync(join(wt, ".git"), "utf8")).toStartWith("gitdir: ");
    // what the user runs next runs nothing planted
    git(repo, "status");
    git(wt, "status");
    expect(existsSync(marker)).toBe(false);
    // the control: unconfined, the same swap works (and is undone)
    const { client: off } = await startDevMcp(repo, base, { TENDRIL_SANDBOX: "off" });
    expect(exitOf(await sh(off, "mv .git .git-old && mv .git-old .git"))).toBe(0);
  });

  test("a git dir whose hooks folder is a link (which a mount would follow, and a command could replace) is read-only as a whole", async () => {
    const repo = join(base, "linked-hooks");
    mkdirSync(join(repo, ".githooks"), { recursive: true });
    expect(Bun.spawnSync(["git", "init", "-q", repo]).exitCode).toBe(0);
    rmSync(join(repo, ".git", "hooks"), { recursive: true, force: true });
    symlinkSync("../.githooks", join(repo, ".git", "hooks"));
    const { client } = await startDevMcp(repo, base, { TENDRIL_SANDBOX: "workspace-write" });
    for (const command of ["echo x > .git/hooks/pre-commit", "rm .git/hooks && mkdir .git/hooks && echo x > .git/hooks/pre-commit", "echo x > .githooks/pre-commit"]) {
      expect({ command, failed: exitOf(await sh(client, command)) !== 0 }).toEqual({ command, failed: true });
    }
    expect(readdirSync(join(repo, ".githooks"))).toEqual([]);
    expect(readlinkSync(join(repo, ".git", "hooks"))).toBe("../.githooks");
    // the rest of the workspace stays writable
    expect(exitOf(await sh(client, "echo ok > notes.txt"))).toBe(0);
    // a link to a folder that does not exist yet: the command cannot make it and fill it
    const dangling = join(base, "dangling-hooks");
    expect(Bun.spawnSync(["git", "init", "-q", dangling]).exitCode).toBe(0);
    rmSync(join(dangling, ".git", "hooks"), { recursive: true, force: true });
    symlinkSync("../hooks-later", join(dangling, ".git", "hooks"));
    const { client: inDangling } = await startDevMcp(dangling, base, { TENDRIL_SANDBOX: "workspace-write" });
    const plant = await sh(inDangling, "mkdir -p hooks-later; echo x > hooks-later/pre-commit");
    expect(exitOf(plant)).not.toBe(0);
    expect(existsSync(join(dangling, "hooks-later", "pre-commit"))).toBe(false);
  });

  // Regression: with core.hooksPath naming a folder in the workspace (husky's gitignored .husky/_), a
  // command could plant a hook there that no diff shows, and the user's next commit ran it.
  test("regression: a hook planted in the workspace folder core.hooksPath names ran at the user's next commit; now that folder is read-only (made empty when missing)", async () => {
    for (const exists of [true, false]) {
      const repo = join(base, `hooks-path-${exists}`);
      expect(Bun.spawnSync(["git", "init", "-q", repo]).exitCode).toBe(0);
      expect(Bun.spawnSync(["git", "-C", repo, "config", "core.hooksPath", ".husky/_"]).exitCode).toBe(0);
      if (exists) {
        mkdirSync(join(repo, ".husky", "_"), { recursive: true });
        writeFileSync(join(repo, ".husky", "_", "pre-commit"), "#!/bin/sh\n");
      }
      const { client } = await startDevMcp(repo, base, { TENDRIL_SANDBOX: "workspace-write" });
      const r = await sh(client, "mkdir -p .husky/_; printf '#!/bin/sh\\ntouch /tmp/x\\n' > .husky/_/post-commit");
      expect({ exists, failed: exitOf(r) !== 0 }).toEqual({ exists, failed: true });
      expect(existsSync(join(repo, ".husky", "_", "post-commit"))).toBe(false);
      expect(exitOf(await sh(client, "echo ok > .husky/notes.txt"))).toBe(0); // the folder around it stays writable
    }
  });

  // The HOME of the tests above lies under /tmp, which is private inside: this one lies outside it, so
  // only the hiding of HOME's secrets keeps them from the command.
  test("HOME's keys, well-known token stores (git's credential store, GitHub's CLI, cloud and registry tokens, agents' logins), shell history, tendril's credentials and sandbox_hide paths are unreadable inside; `off` reads them", async () => {
    if (realpathSync("/var/tmp") !== "/var/tmp") return; // a /var/tmp that leads into /tmp: nothing to test
    const home = mkdtempSync("/var/tmp/tendril-home-");
    try {
      const secrets: Record<string, string> = {
        ".ssh/id_ed25519": "KEY-ssh",
        ".git-credentials": "https://u:TOKEN-git@github.com",
        ".config/gh/hosts.yml": "oauth_token: TOKEN-gh",
        ".netrc": "machine x login u password TOKEN-netrc",
        ".docker/config.json": '{"auths":{"x":{"auth":"TOKEN-docker"}}}',
        ".cargo/credentials.toml": 'token = "TOKEN-cargo"',
        ".cargo/credentials": 'token = "TOKEN-cargo-old"',
        ".config/git/credentials": "https://u:TOKEN-git-xdg@github.com", // regression: git credential-store's second file was readable
        ".config/tendril/credentials.toml": "api_key = 'TOKEN-tendril'",
        ".bash_history": "export OPENAI_API_KEY=TOKEN-history",
        ".codex/auth.json": '{"token":"TOKEN-agent-login"}',
        ".cache/huggingface/token": "TOKEN-hf", // ~/.cache itself is shown read-only for tools' caches
        "private/token": "TOKEN-hidden-by-setting",
      };
      for (const [rel, text] of Object.entries(secrets)) {
        mkdirSync(join(home, rel, ".."), { recursive: true });
        writeFileSync(join(home, rel), `${text}\n`);
      }
      writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = visible\n"); // not a secret: still readable
      const read = `for f in ${Object.keys(secrets).join(" ")} .gitconfig; do cat "$HOME/$f" 2>/dev/null; done; true`;
      const config = join(home, "sandbox.toml");
      writeFileSync(config, 'sandbox_hide = ["~/private/token"]\n');
      const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), TENDRIL_CONFIG: config };
      const { client } = await startDevMcp(ws, base, { ...env, TENDRIL_SANDBOX: "read-only" });
      const inside = String((await sh(client, read)).structuredContent?.stdout);
      expect(inside).toBe("[user]\n\tname = visible\n");
      const { client: off } = await startDevMcp(ws, base, { ...env, TENDRIL_SANDBOX: "off" });
      const outside = String((await sh(off, read)).structuredContent?.stdout);
      for (const text of Object.values(secrets)) expect(outside).toContain(text);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a .git a command makes where there was none (it cannot be guarded) is said in the command's result", async () => {
    const bare = join(base, "bare-ws");
    mkdirSync(bare);
    const { client } = await startDevMcp(bare, base, { TENDRIL_SANDBOX: "workspace-write" });
    const first = await sh(client, "git init -q . && echo made");
    expect(first.structuredContent?.stdout).toBe("made\n");
    expect(textOf(first)).toContain(`sandbox: this command created ${join(bare, ".git")}`);
    // once it is there it is guarded like any git dir, and nothing more is said
    const second = await sh(client, "echo again");
    expect(textOf(second)).not.toContain("this command created");
    expect(exitOf(await sh(client, "mv .git .git-old"))).not.toBe(0);
  });

  // Regression: sharing the host's network namespace shares its abstract unix sockets (an X server's
  // @/tmp/.X11-unix/X0, a D-Bus bus), which no mount hides: a confined command could type into the
  // user's terminal or ask systemd to run anything. Now no unix socket can be made under that setting.
  test("regression: under sandbox_network = true a host's abstract unix socket could be connected to; now making a unix socket fails with EPERM (socketpair works, TCP too), and `off` still reaches it", async () => {
    const name = `tendril-abstract-${process.pid}-${Date.now()}`;
    const host = createServer((c) => c.end("host-abstract\n"));
    await new Promise<void>((r, j) => (host.once("error", j), host.listen(`\0${name}`, r)));
    const probe = `perl -MIO::Socket::UNIX -e '$c = IO::Socket::UNIX->new(Peer => "\\0${name}") or die "connect: $!\\n"; print scalar <$c>'`;
    const pair = `perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "socketpair: $!\\n"; syswrite $a, "paired\\n"; sysread $b, my $got, 7; print $got'`;
    try {
      const file = join(base, "net.toml");
      writeFileSync(file, "sandbox_network = true\n");
      const { client } = await start("workspace-write", { TENDRIL_CONFIG: file });
      const r = await sh(client, probe);
      expect({ failed: exitOf(r) !== 0, out: r.structuredContent?.stdout }).toEqual({ failed: true, out: "" });
      expect(r.structuredContent?.stderr).toContain("connect: Operation not permitted");
      expect(client.getInstructions()).toContain("no unix sockets");
      const p = await sh(client, pair);
      expect({ exit: exitOf(p), out: p.structuredContent?.stdout }).toEqual({ exit: 0, out: "paired\n" });
      const tcp = await sh(client, attempts().network);
      expect({ exit: exitOf(tcp), out: tcp.structuredContent?.stdout }).toEqual({ exit: 0, out: "hello\n" });
      const { client: off } = await start("off");
      expect((await sh(off, probe)).structuredContent?.stdout).toBe("host-abstract\n");
    } finally {
      host.close();
    }
  });

  test("cancel, timeout and the server's SIGKILL kill a sleep inside, and a setsid escapee dies with the sandbox", async () => {
    const { client } = await start("workspace-write");
    const marker = (n: string) => `sleep 300.${n}`;
    const running = (n: string) =>
      readdirSync("/proc").filter((p) => /^\d+$/.test(p)).some((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ").includes(`300.${n}`);
        } catch {
          return false;
        }
      });
    const t0 = Date.now();
    const timed = await sh(client, marker("71"), { timeout_s: 0.5 });
    expect(timed.structuredContent?.timed_out).toBe(true);
    expect(exitOf(timed)).toBe(124);
    expect(Date.now() - t0).toBeLessThan(5000 * 2);
    expect(running("71")).toBe(false);

    // A grandchild that ignores SIGTERM: the ladder's SIGTERM kills the outer bwrap, which takes the namespace.
    const stubborn = await sh(client, `bash -c 'trap "" TERM; ${marker("74")}' & wait`, { timeout_s: 1 });
    expect(stubborn.structuredContent?.timed_out).toBe(true);
    for (let i = 0; i < 100 && running("74"); i++) await Bun.sleep(10);
    expect(running("74")).toBe(false);

    // MCP cancellation (the agent's session/cancel takes this path) kills the group inside.
    const ac = new AbortController();
    const call = callTool(client, "shell", { command: marker("72") }, ac.signal).catch(() => undefined);
    for (let i = 0; i < 500 && !running("72"); i++) await Bun.sleep(10);
    expect(running("72")).toBe(true);
    const c0 = Date.now();
    ac.abort();
    await call;
    for (let i = 0; i < 500 && running("72"); i++) await Bun.sleep(10);
    expect(running("72")).toBe(false);
    expect(Date.now() - c0).toBeLessThan(5000);

    // The server SIGKILLed mid-command: nothing it started inside the sandbox survives it.
    const killed = await start("workspace-write");
    void sh(killed.client, marker("75")).catch(() => undefined);
    for (let i = 0; i < 500 && !running("75"); i++) await Bun.sleep(10);
    expect(running("75")).toBe(true);
    process.kill(killed.pid, "SIGKILL");
    for (let i = 0; i < 500 && running("75"); i++) await Bun.sleep(10);
    expect(running("75")).toBe(false);

    const esc = await sh(client, `setsid ${marker("73")} >/dev/null 2>&1 & echo started`);
    expect(esc.structuredContent?.stdout).toBe("started\n");
    expect(running("73")).toBe(false);
  });

  test("regression: a sandboxed call waited out the kill grace (bwrap's reaper lingered as a zombie in the group)", async () => {
    // With a 4 s grace, one call that waited for it would take 4 s; three calls must take far less.
    const { client } = await start("workspace-write", { TENDRIL_KILL_GRACE_MS: "4000" });
    await sh(client, "true");
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) expect(exitOf(await sh(client, "true"))).toBe(0);
    expect(Date.now() - t0).toBeLessThan(4000);
  });

  test("a repository without .git/hooks gets a read-only empty one inside, and the model cannot plant a hook", async () => {
    const repo = join(base, "bare-repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    const { client } = await startDevMcp(repo, base, { TENDRIL_SANDBOX: "workspace-write" });
    const r = await sh(client, "mkdir -p .git/hooks; echo 'echo pwned' > .git/hooks/post-checkout; echo ok > file.txt");
    expect(textOf(r)).toContain("Read-only file system");
    expect(readdirSync(join(repo, ".git", "hooks"))).toEqual([]);
    expect(readFileSync(join(repo, "file.txt"), "utf8")).toBe("ok\n");
  });

  test("fail closed: no bwrap on PATH makes each command a tool error saying why and how to fix it", async () => {
    const bin = join(base, "bin-no-bwrap");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["bash", "cat"]) if (!existsSync(join(bin, tool))) symlinkSync(`/bin/${tool}`, join(bin, tool));
    const { client } = await start("workspace-write", { PATH: bin });
    for (let i = 0; i < 2; i++) {
      const r = await sh(client, "echo should-not-run > ran.txt");
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain("bwrap (bubblewrap) is not on PATH");
      expect(textOf(r)).toContain("apt-get install bubblewrap");
      expect(textOf(r)).toContain('sandbox = "off"');
    }
    expect(existsSync(join(ws, "ran.txt"))).toBe(false);
    const check = runBin(["agent", "--check-sandbox"], { env: { PATH: bin, HOME: base } });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("read-only: does not work");
    const good = runBin(["agent", "--check-sandbox"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base } });
    expect({ code: good.code, out: good.stdout }).toEqual({ code: 0, out: expect.stringContaining("workspace-write: works") });
    expect(good.stdout).toContain("workspace-write with sandbox_network = true: works");
    expect(good.stdout).toContain("workspace-write with sandbox_allow_domains: works");
    expect(good.stderr).toBe("");
    expect(check.stderr).toBe(""); // each failure is said once, on its line
  });

  test("fail closed: a bwrap inside the workspace is refused", async () => {
    const bin = join(ws, "bin");
    mkdirSync(bin, { recursive: true });
    symlinkSync(BWRAP!, join(bin, "bwrap"));
    const { client } = await start("workspace-write", { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` });
    const r = await sh(client, "true");
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("lies inside the workspace");
    rmSync(bin, { recursive: true });
  });
});

describe.skipIf(!BWRAP)("tendril agent --sandbox", () => {
  let fake: FakeLlm;
  const agents: TestAgent[] = [];
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => {
    for (const a of agents) await a.close(2000).catch(() => {});
    await fake.close();
  });
  const agent = (args: string[]) => {
    const a = startAgent({ args: ["agent", ...args], env: { ...agentEnv(fake, base), HOME: base, TENDRIL_MODE: "yolo" } });
    agents.push(a);
    return a;
  };

  test("the flag confines the agent's shell: the model is told the rules and reads the system's refusal, and cancel kills a sleep inside", async () => {
    const a = agent(["--sandbox", "workspace-write"]);
    await a.initialize();
    const { sessionId } = await a.newSession(ws);
    fake.script([{ toolCalls: [{ id: "e1", name: "dev__shell", input: { command: `cat ${secret}; echo x > ${join(outsideDir, "agent-outside.txt")}` } }] }, { text: "blocked" }]);
    const before = fake.requests.length;
    expect((await a.prompt(sessionId, "try")).stopReason).toBe("end_turn");
    expect(existsSync(join(outsideDir, "agent-outside.txt"))).toBe(false);
    expect(JSON.stringify(fake.requests[before]!.body)).toContain('Shell commands run in a sandbox (sandbox = \\"workspace-write\\"');
    const seen = JSON.stringify(fake.requests[before + 1]!.body.messages);
    expect(seen).toContain("Read-only file system");
    expect(seen).not.toContain("PRIVATE KEY");

    // a duration no other run of this test on the machine uses: the search below looks at every process
    const duration = `300.${process.pid}`;
    fake.script([{ toolCalls: [{ id: "k1", name: "dev__shell", input: { command: `sleep ${duration}` } }] }]);
    const turn = a.prompt(sessionId, "sleep");
    const sleeping = () =>
      readdirSync("/proc").some((p) => /^\d+$/.test(p) && (() => { try { return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(`sleep\0${duration}`); } catch { return false; } })());
    for (let i = 0; i < 500 && !sleeping(); i++) await Bun.sleep(10);
    expect(sleeping()).toBe(true);
    const t0 = Date.now();
    await a.cancel(sessionId);
    expect((await turn).stopReason).toBe("cancelled");
    for (let i = 0; i < 500 && sleeping(); i++) await Bun.sleep(10);
    expect(sleeping()).toBe(false);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe.skipIf(!BWRAP)("tendril prompt --sandbox", () => {
  test("confines the built-in agent's shell; refused with --agent and for an unknown setting", async () => {
    const fake = await startFakeLlm();
    try {
      fake.script([{ toolCalls: [{ id: "p1", name: "dev__shell", input: { command: "echo in > in.txt; echo out > ../prompt-outside.txt" } }] }, { text: "done" }]);
      const env = { ...agentEnv(fake, base), HOME: base, PATH: process.env.PATH ?? "/usr/bin:/bin" };
      const r = await runBinAsync(["prompt", "--sandbox", "workspace-write", "--approve", "all", "write"], { env, cwd: ws, timeoutMs: 20_000 });
      expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(readFileSync(join(ws, "in.txt"), "utf8")).toBe("in\n");
      expect(existsSync(join(base, "prompt-outside.txt"))).toBe(false);
    } finally {
      await fake.close();
    }
    const withAgent = runBin(["prompt", "--sandbox", "read-only", "--agent", "true", "hi"], { input: "" });
    expect(withAgent.code).toBe(2);
    expect(withAgent.stderr).toContain("--sandbox confines the built-in agent only");
    const bad = runBin(["prompt", "--sandbox", "strict", "hi"], { input: "" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are off, read-only, workspace-write");
  });
});

describe("sandbox settings", () => {
  test("a bad sandbox value is refused by flag, env and config, naming the choices", () => {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base, XDG_CONFIG_HOME: join(base, "config") };
    const flag = runBin(["dev-mcp", "--root", ws, "--sandbox", "strict"], { env, input: "" });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('sandbox must be one of off, read-only, workspace-write, got "strict"');
    const viaEnv = runBin(["agent"], { env: { ...env, TENDRIL_SANDBOX: "on" }, input: "" });
    expect(viaEnv.code).toBe(2);
    expect(viaEnv.stderr).toContain('got "on"');
    const file = join(base, "bad.toml");
    writeFileSync(file, 'sandbox = "yes"\n');
    const viaFile = runBin(["dev-mcp", "--root", ws], { env: { ...env, TENDRIL_CONFIG: file }, input: "" });
    expect(viaFile.code).toBe(2);
    expect(viaFile.stderr).toContain('got "yes"');
  });

  test("sandbox_hide paths that do not exist are refused, not ignored (sandbox_allow_domains: tests/sandbox2.test.ts)", () => {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base };
    const hide = join(base, "hide.toml");
    writeFileSync(hide, 'sandbox_hide = ["~/no-such-dir"]\n');
    const h = runBin(["agent"], { env: { ...env, TENDRIL_CONFIG: hide }, input: "" });
    expect(h.code).toBe(2);
    expect(h.stderr).toContain(`sandbox_hide: ${join(base, "no-such-dir")} does not exist`);
    const rel = join(base, "rel.toml");
    writeFileSync(rel, 'sandbox_hide = ["secrets"]\n');
    const r = runBin(["agent"], { env: { ...env, TENDRIL_CONFIG: rel }, input: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("must be an absolute path or start with ~/");
  });
});
