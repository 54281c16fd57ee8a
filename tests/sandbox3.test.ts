// End-to-end tests of the sandbox's third round (SPEC §3.8) through the built binary with the real
// bubblewrap: every git dir and `.git` pointer under a writable root guarded (A2), "the sandbox stopped
// it" decided from bwrap's and the proxy's reports, never the output (A3), a private writable /tmp and
// /dev/shm (A6), the baseline seccomp filter (A7). Each with its `off` control where one applies.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BWRAP, requireBwrapUnderCi } from "./bwrap.ts";
import { callTool, startDevMcp, stopDevMcps, textOf, type ToolResult } from "./dev-mcp-harness.ts";

requireBwrapUnderCi("tests/sandbox3.test.ts");

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-sandbox3-")));
afterEach(stopDevMcps);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const exitOf = (r: ToolResult) => r.structuredContent?.exit_code as number;
const stdoutOf = (r: ToolResult) => String(r.structuredContent?.stdout ?? "");
const sh = (client: Awaited<ReturnType<typeof startDevMcp>>["client"], command: string) => callTool(client, "shell", { command });

/** git as the user runs it on the host, with a marker-free environment. */
function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "protocol.file.allow=always", ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base } });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** A config that runs `touch MARKER` at the next `git status` there (core.fsmonitor). */
const plantedConfig = (marker: string) => `[core]\\n\\tfsmonitor = "touch ${marker}"\\n`;

describe.skipIf(!BWRAP)("A2: git dirs and pointers under a writable root", () => {
  /** A workspace repository with a submodule (its .git a file), a nested repository that is not a submodule. */
  function workspace(name: string): { ws: string; sub: string; nested: string } {
    const ws = join(base, name);
    const lib = join(base, `${name}-lib`);
    for (const d of [ws, lib]) {
      mkdirSync(d, { recursive: true });
      git(d, "init", "-q", "-b", "main");
      git(d, "commit", "-q", "--allow-empty", "-m", "first");
    }
    git(ws, "submodule", "add", "-q", lib, "vendor/lib");
    git(ws, "commit", "-qm", "submodule");
    const nested = join(ws, "tools", "nested");
    mkdirSync(nested, { recursive: true });
    git(nested, "init", "-q", "-b", "main");
    return { ws, sub: join(ws, "vendor", "lib"), nested };
  }

  test("A2: a nested repository's .git/config and hooks, a submodule's .git file and the workspace's .git/commondir cannot be planted; git status on the host runs nothing; commits still work inside; `off` lets each through", async () => {
    const { ws, sub, nested } = workspace("a2");
    const marker = join(base, "a2-fsmonitor-ran");
    const elsewhere = join(ws, "planted-gitdir");
    const attempts = {
      nestedConfig: `printf '${plantedConfig(marker)}' >> tools/nested/.git/config`,
      nestedHook: "printf '#!/bin/sh\\ntouch /tmp/x\\n' > tools/nested/.git/hooks/post-checkout",
      nestedSwap: "mv tools/nested/.git tools/nested/.git-old",
      submodulePointer: `mkdir -p ${elsewhere} && cp -r .git/modules/vendor/lib/. ${elsewhere}/ && printf '${plantedConfig(marker)}' >> ${elsewhere}/config && echo 'gitdir: ${elsewhere}' > vendor/lib/.git`,
      submoduleRemove: "rm -f vendor/lib/.git",
    };
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    for (const [name, command] of Object.entries(attempts)) expect({ name, failed: exitOf(await sh(client, command)) !== 0 }).toEqual({ name, failed: true });
    // commondir: git refuses an empty placeholder, so it cannot be mounted over; written, it is removed and named
    const common = await sh(client, `mkdir -p ${elsewhere}2 && printf '${plantedConfig(marker)}' > ${elsewhere}2/config && echo ${elsewhere}2 > .git/commondir && echo wrote`);
    expect(stdoutOf(common)).toBe("wrote\n");
    expect(textOf(common)).toContain(`sandbox: this command wrote ${join(ws, ".git", "commondir")}`);
    expect(existsSync(join(ws, ".git", "commondir"))).toBe(false);
    expect(readFileSync(join(sub, ".git"), "utf8")).toStartWith("gitdir: ../../.git/modules/vendor/lib");
    expect(readFileSync(join(nested, ".git", "config"), "utf8")).not.toContain("fsmonitor");
    // commits still work inside, in the workspace, the submodule and the nested repository
    const commit = await sh(client, "for d in . vendor/lib tools/nested; do (cd $d && echo hi > f.txt && git add f.txt && git -c user.email=t@example.com -c user.name=t commit -qm inside) || exit 1; done; echo done");
    expect({ exit: exitOf(commit), out: stdoutOf(commit) }).toEqual({ exit: 0, out: "done\n" });
    expect(git(nested, "log", "--oneline").trim().split("\n")).toHaveLength(1);
    // what the user runs next runs nothing planted
    for (const d of [ws, sub, nested]) git(d, "status");
    expect(existsSync(marker)).toBe(false);
    // the control: unconfined, the same writes go through (undone after)
    const { client: off } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "off" });
    expect(exitOf(await sh(off, "cp tools/nested/.git/config /tmp/a2-config && echo '# x' >> tools/nested/.git/config && cp /tmp/a2-config tools/nested/.git/config"))).toBe(0);
    expect(exitOf(await sh(off, "mv vendor/lib/.git vendor/lib/.git-old && mv vendor/lib/.git-old vendor/lib/.git"))).toBe(0);
  });

  test("A2: a .git a command makes anywhere under a root is named in its result; a clone too", async () => {
    const { ws } = workspace("a2-new");
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    const made = await sh(client, "mkdir -p deep/down && git init -q deep/down && echo made");
    expect(stdoutOf(made)).toBe("made\n");
    expect(textOf(made)).toContain(`sandbox: this command created ${join(ws, "deep", "down", ".git")}`);
    expect(made.structuredContent?.sandbox_note).toBeUndefined(); // not a stop: no unsandboxed retry is offered
    // once there it is guarded like any git dir, and nothing more is said
    const again = await sh(client, "echo again");
    expect(textOf(again)).not.toContain("sandbox:");
    expect(exitOf(await sh(client, `printf '${plantedConfig("/tmp/x")}' >> deep/down/.git/config`))).not.toBe(0);
  });

  test("regression: trust3 (a)(b)(e): a repository-shaped folder hidden through .git/info/exclude, a git dir replaced by mv and git init, and an include.path target the command writes are moved aside; the user's next git status runs nothing; the result and the notice say how to restore", async () => {
    const { ws } = workspace("a2-shape");
    const marker = join(base, "a2-shape-ran");
    git(ws, "config", "include.path", "../.gitconfig");
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    const shaped = await sh(client, `echo src >> .git/info/exclude; mkdir -p src/objects src/refs/heads && echo 'ref: refs/heads/main' > src/HEAD && printf '[core]\\n\\tworktree = ..\\n\\tfsmonitor = "touch ${marker}"\\n' > src/config && echo made`);
    expect(stdoutOf(shaped)).toBe("made\n");
    expect(textOf(shaped)).toContain(`sandbox: this command wrote ${join(ws, "src")}`);
    expect(String(shaped.structuredContent?.user_notice)).toContain("moved aside");
    expect(existsSync(join(ws, "src"))).toBe(false);
    const swapped = await sh(client, `mv tools/nested tools/.nested_old && git init -q tools/nested && printf '${plantedConfig(marker)}' >> tools/nested/.git/config && echo swapped`);
    expect(textOf(swapped)).toContain(`sandbox: this command wrote ${join(ws, "tools", "nested", ".git")}`);
    const included = await sh(client, `printf '${plantedConfig(marker)}' > .gitconfig && echo wrote`);
    expect(textOf(included)).toContain(`sandbox: this command wrote ${join(ws, ".gitconfig")}`);
    for (const d of [ws, join(ws, "tools", "nested")]) if (existsSync(d)) git(d, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("a background command is git-checked at each read of its output, while it still runs: what it plants is moved aside before the user's next git status", async () => {
    const { ws } = workspace("a2-background");
    const marker = join(base, "a2-background-ran");
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    // A repository-shaped folder (the git dirs that exist are mounted read-only), planted while it runs on.
    const plant = `mkdir -p src/objects src/refs/heads && echo 'ref: refs/heads/main' > src/HEAD && printf '[core]\\n\\tworktree = ..\\n\\tfsmonitor = "touch ${marker}"\\n' > src/config && echo planted`;
    const started = await callTool(client, "shell", { command: `${plant} && exec sleep 60`, background: true });
    const id = String(started.structuredContent?.background_id);
    let text = textOf(started);
    for (let i = 0; i < 40 && !text.includes("moved aside"); i++) text += textOf(await callTool(client, "shell_read", { id, wait_ms: 250 }));
    expect(text).toContain(`sandbox: this command wrote ${join(ws, "src")}`);
    // still running, and the planted folder is gone
    expect((await callTool(client, "shell_read", { id })).structuredContent?.running).toBe(true);
    expect(existsSync(join(ws, "src"))).toBe(false);
    git(ws, "status");
    expect(existsSync(marker)).toBe(false);
    await callTool(client, "shell_kill", { id });
  });
});

describe.skipIf(!BWRAP)("A3: the sandbox stopped it, from what bwrap and the proxy reported", () => {
  test("A3: output saying Permission denied, Read-only file system or bwrap: gets no sandbox_note; a refused write neither; a command bwrap could not set up does", async () => {
    const ws = join(base, "a3");
    mkdirSync(ws, { recursive: true });
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    const printed = await sh(client, "echo 'cat: secret: Permission denied' >&2; echo 'touch: x: Read-only file system' >&2; echo 'bwrap: Can not mount' >&2; exit 1");
    expect(exitOf(printed)).toBe(1);
    expect(printed.structuredContent?.sandbox_note).toBeUndefined();
    expect(textOf(printed)).not.toContain("sandbox:");
    const refused = await sh(client, "touch /usr/tendril-a3");
    expect(exitOf(refused)).not.toBe(0);
    expect(refused.structuredContent?.sandbox_note).toBeUndefined();
    // A bwrap that works for the start-up probe and fails to set up every command after it.
    const bin = join(base, "bin-a3");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "bwrap"), `#!/bin/sh\nfor a in "$@"; do last=$a; done\n[ "$last" = true ] || [ "$1" = --help ] && exec ${BWRAP} "$@"\necho 'bwrap: Can not mount tmpfs' >&2\nexit 1\n`);
    chmodSync(join(bin, "bwrap"), 0o755);
    const { client: broken } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write", PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` });
    const stopped = await sh(broken, "echo should-not-run");
    expect(stdoutOf(stopped)).toBe("");
    expect(stopped.structuredContent?.sandbox_note).toContain('sandbox: bwrap could not set up this command (its message is in stderr); the setting in force is sandbox = "workspace-write"');
  });
});

describe.skipIf(!BWRAP)("A6 and A7: inside every confined setting", () => {
  /** The add_key call (a user key in the session keyring), by this host's number. */
  const ADD_KEY = process.arch === "arm64" ? 217 : 248;
  const addKey = `perl -e 'my ($t, $d, $p) = ("user", "tendril-a7", "v"); $r = syscall(${ADD_KEY}, $t, $d, $p, 1, -3); print $r < 0 ? "refused: $!\\n" : "added\\n"'`;

  test("A7: add_key, unshare -Ur and a new user namespace fail inside read-only, workspace-write and sandbox_network; git, node and rg still work; `off` adds the key and unshares", async () => {
    const ws = join(base, "a7");
    mkdirSync(ws, { recursive: true });
    git(ws, "init", "-q", "-b", "main");
    const net = join(base, "a7-net.toml");
    writeFileSync(net, "sandbox_network = true\n");
    for (const [mode, env] of [["read-only", {}], ["workspace-write", {}], ["workspace-write", { TENDRIL_CONFIG: net }]] as const) {
      const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: mode, ...env });
      const key = await sh(client, addKey);
      expect({ mode, env, out: stdoutOf(key) }).toEqual({ mode, env, out: "refused: Operation not permitted\n" });
      const userns = await sh(client, "unshare -Ur true && echo unshared");
      expect({ mode, env, unshared: stdoutOf(userns).includes("unshared") }).toEqual({ mode, env, unshared: false });
      const tools = await sh(client, `node -e 'console.log(require("os").platform())' && TENDRIL_RG_BUILTIN=1 rg --version >/dev/null && echo rg-ok && git status --short >/dev/null && echo git-ok`);
      expect({ mode, env, out: stdoutOf(tools) }).toEqual({ mode, env, out: "linux\nrg-ok\ngit-ok\n" });
    }
    const { client: rw } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    const commit = await sh(rw, "echo x > f && git add f && git -c user.email=t@example.com -c user.name=t commit -qm a7 && echo committed");
    expect(stdoutOf(commit)).toBe("committed\n");
    const { client: off } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "off" });
    expect(stdoutOf(await sh(off, addKey))).toBe("added\n");
    expect(stdoutOf(await sh(off, "unshare -Ur true && echo unshared"))).toBe("unshared\n");
  });

  test("A7: where bwrap's --disable-userns cannot work (a setuid bwrap, unprivileged user namespaces off), commands still run and the filter alone refuses a new user namespace", async () => {
    const ws = join(base, "a7-fallback");
    const bin = join(base, "bin-a7");
    mkdirSync(ws, { recursive: true });
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "bwrap"), `#!/bin/sh\nfor a in "$@"; do [ "$a" = --disable-userns ] && { echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2; exit 1; }; done\nexec ${BWRAP} "$@"\n`);
    chmodSync(join(bin, "bwrap"), 0o755);
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write", PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` });
    const r = await sh(client, "unshare -Ur true && echo unshared; echo ran");
    expect({ error: r.isError ?? false, out: stdoutOf(r) }).toEqual({ error: false, out: "ran\n" });
    expect(stdoutOf(await sh(client, addKey))).toBe("refused: Operation not permitted\n");
  });

  test("A6: /tmp and /dev/shm are writable and private to each command (mktemp, Python's multiprocessing); nothing reaches the host's /tmp", async () => {
    const ws = join(base, "a6");
    mkdirSync(ws, { recursive: true });
    const tag = `tendril-a6-${process.pid}`;
    const py = `python3 -c 'import multiprocessing as m
if __name__ == "__main__":
    with m.Pool(2) as p: print(sum(p.map(abs, [-1, -2])))'`;
    for (const mode of ["read-only", "workspace-write"] as const) {
      const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: mode });
      const r = await sh(client, `f=$(mktemp /tmp/${tag}.XXXX) && echo t > "$f" && cat "$f" && echo s > /dev/shm/${tag} && cat /dev/shm/${tag} && ${py}`);
      expect({ mode, exit: exitOf(r), out: stdoutOf(r) }).toEqual({ mode, exit: 0, out: "t\ns\n3\n" });
      // the next command has a fresh /tmp
      expect({ mode, out: stdoutOf(await sh(client, `ls /tmp | grep -c ${tag} || true`)) }).toEqual({ mode, out: "0\n" });
    }
    expect(Bun.spawnSync(["sh", "-c", `ls /tmp /dev/shm | grep -c ${tag} || true`]).stdout.toString()).toBe("0\n");
  });
});

describe.skipIf(!BWRAP)("A5: HOME in the sandbox", () => {
  // HOME outside /tmp (private inside), so only the HOME view keeps its files from the command.
  const outside = !existsSync("/var/tmp") || realpathSync("/var/tmp") !== "/var/tmp" ? undefined : "/var/tmp";
  const files: Record<string, [string, boolean]> = {
    ".gitconfig": ["[user]\n\tname = t", true],
    ".config/git/ignore": ["*.swp", true],
    ".npmrc": ["registry=https://registry.npmjs.org/", true],
    ".cargo/bin/cargo-x": ["toolchain-cargo", true],
    ".rustup/settings.toml": ["toolchain-rustup", true],
    ".cache/pip/entry": ["cached", true],
    ".local/bin/my-tool": ["local-bin", true],
    ".mytoolchain/lib/runtime": ["toolchain-on-path", true],
    ".cargo/credentials.toml": ["TOKEN-cargo", false],
    ".local/state/tendril/sessions/s.jsonl": ["TRANSCRIPT-other-workspace", false],
    ".config/tendril/credentials.toml": ["TOKEN-tendril", false],
    ".config/gh/hosts.yml": ["TOKEN-gh", false],
    ".bashrc": ["export SECRET=BASHRC", false],
    "Documents/notes.txt": ["PRIVATE-notes", false],
  };
  const readAll = `for f in ${Object.keys(files).join(" ")}; do cat "$HOME/$f" 2>/dev/null && echo; done; true`;
  const makeHome = (parent: string) => {
    const home = mkdtempSync(join(parent, "tendril-a5-home-"));
    for (const [rel, [text]] of Object.entries(files)) {
      mkdirSync(join(home, rel, ".."), { recursive: true });
      writeFileSync(join(home, rel), text);
    }
    mkdirSync(join(home, ".mytoolchain", "bin"), { recursive: true });
    return home;
  };

  test.skipIf(!outside)("A5: HOME is hidden but for tools' configuration and toolchains (read-only); Tendril's state and config, token stores and everything else are unreadable; `off` reads them all", async () => {
    const home = makeHome(outside!);
    try {
      const ws = join(base, "a5-ws");
      mkdirSync(ws, { recursive: true });
      const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), PATH: `${join(home, ".mytoolchain", "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}` };
      const shown = Object.values(files).filter(([, v]) => v).map(([t]) => `${t}\n`).join("");
      for (const mode of ["read-only", "workspace-write"] as const) {
        const { client } = await startDevMcp(ws, base, { ...env, TENDRIL_SANDBOX: mode });
        expect({ mode, seen: stdoutOf(await sh(client, readAll)) }).toEqual({ mode, seen: shown });
        const write = await sh(client, 'echo x >> "$HOME/.gitconfig"; echo x > "$HOME/.cargo/bin/planted"; echo private > "$HOME/scratch" && cat "$HOME/scratch"');
        expect({ mode, out: stdoutOf(write) }).toEqual({ mode, out: "private\n" }); // HOME itself is a private scratch folder
        expect(readFileSync(join(home, ".gitconfig"), "utf8")).toBe("[user]\n\tname = t");
        expect(existsSync(join(home, ".cargo", "bin", "planted")) || existsSync(join(home, "scratch"))).toBe(false);
      }
      const { client: off } = await startDevMcp(ws, base, { ...env, TENDRIL_SANDBOX: "off" });
      expect(stdoutOf(await sh(off, readAll))).toBe(Object.values(files).map(([t]) => `${t}\n`).join(""));
      // Tendril's state dir in force, wherever XDG_STATE_HOME puts it, is unreadable too
      const state = join(home, "..", `${home.split("/").pop()}-state`);
      mkdirSync(join(state, "tendril"), { recursive: true });
      writeFileSync(join(state, "tendril", "approvals.json"), "APPROVALS");
      try {
        const read = `cat ${join(state, "tendril", "approvals.json")}`;
        const { client: confined } = await startDevMcp(ws, base, { ...env, XDG_STATE_HOME: state, TENDRIL_SANDBOX: "read-only" });
        expect(stdoutOf(await sh(confined, read))).toBe("");
        const { client: plain } = await startDevMcp(ws, base, { ...env, XDG_STATE_HOME: state, TENDRIL_SANDBOX: "off" });
        expect(stdoutOf(await sh(plain, read))).toBe("APPROVALS");
      } finally {
        rmSync(state, { recursive: true, force: true });
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test.skipIf(!outside)("A5: / and HOME are refused as writable roots with a clear error; under a root that holds HOME its dotfiles, ~/.config and ~/.local/bin stay read-only, the rest writable", async () => {
    const parent = mkdtempSync(join(outside!, "tendril-a5-parent-"));
    try {
      const home = makeHome(parent);
      for (const root of [home, "/"]) {
        const { client } = await startDevMcp(root, base, { HOME: home, TENDRIL_SANDBOX: "workspace-write" });
        const r = await sh(client, `touch ${join(home, "ran")}`);
        expect({ root, error: r.isError, text: textOf(r) }).toEqual({ root, error: true, text: expect.stringContaining(`sandbox = "workspace-write" does not make ${root} writable`) });
      }
      expect(existsSync(join(home, "ran"))).toBe(false);
      const { client: ro } = await startDevMcp(home, base, { HOME: home, TENDRIL_SANDBOX: "read-only" });
      expect(exitOf(await sh(ro, "cat .gitconfig >/dev/null"))).toBe(0); // read-only there is fine
      const { client } = await startDevMcp(parent, base, { HOME: home, TENDRIL_SANDBOX: "workspace-write" });
      const rel = home.slice(parent.length + 1);
      for (const command of [`echo x >> ${rel}/.bashrc`, `echo x > ${rel}/.profile`, `echo x > ${rel}/.config/autostart`, `echo x > ${rel}/.local/bin/ls`, `rm ${rel}/.gitconfig`, `cat ${rel}/.config/tendril/credentials.toml`]) {
        expect({ command, failed: exitOf(await sh(client, command)) !== 0 }).toEqual({ command, failed: true });
      }
      expect(exitOf(await sh(client, `echo kept > ${rel}/Documents/new.txt`))).toBe(0);
      expect(readFileSync(join(home, "Documents", "new.txt"), "utf8")).toBe("kept\n");
      expect(readFileSync(join(home, ".bashrc"), "utf8")).toBe("export SECRET=BASHRC");
      expect(existsSync(join(home, ".profile"))).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!BWRAP)("what else stays out of reach", () => {
  const ws = join(base, "reach");
  const config = (name: string, toml: string) => {
    writeFileSync(join(base, name), toml);
    return { TENDRIL_CONFIG: join(base, name) };
  };
  mkdirSync(ws, { recursive: true });

  test("the agent's ssh-agent socket (SSH_AUTH_SOCK) cannot be reached from inside; under `off` it can", async () => {
    const { createServer } = await import("node:net");
    const sock = join(base, "agent.sock");
    const agentSock = createServer((c) => c.end());
    await new Promise<void>((r) => agentSock.listen(sock, r));
    try {
      const probe = `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => "${sock}") or die "refused: $!\n"; print "connected\n"'`;
      for (const [mode, reached] of [["workspace-write", false], ["off", true]] as const) {
        const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: mode, SSH_AUTH_SOCK: sock });
        expect({ mode, reached: stdoutOf(await callTool(client, "shell", { command: probe })) === "connected\n" }).toEqual({ mode, reached });
      }
    } finally {
      agentSock.close();
    }
  });

  test("a sandbox_hide path that does not exist is refused by dev-mcp, agent and prompt alike, naming it", async () => {
    const { runBin } = await import("./binary.ts");
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base, ...config("hide-missing.toml", 'sandbox_hide = ["/no/such/secret"]\n') };
    for (const args of [["dev-mcp", "--root", ws], ["agent"], ["prompt", "hi"]]) {
      const r = runBin(args, { env, input: "" });
      // each refuses with exit 2 (prompt reads its built-in agent's settings before the run starts)
      expect({ args, code: r.code, said: r.stderr.includes("sandbox_hide: /no/such/secret does not exist") }).toEqual({ args, code: 2, said: true });
    }
  });});
