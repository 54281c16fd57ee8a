import { expect, test } from "bun:test";
import { bwrapArgs, explainSandboxFailure, type SandboxContext } from "./sandbox.ts";

const ctx: SandboxContext = {
  settings: { mode: "read-only", network: false, hide: [], allowDomains: [] },
  root: "/nonexistent/ws",
  pathVar: "/usr/bin",
  home: "/nonexistent/home",
  configDir: "/nonexistent/home/.config/tendril",
};

test("a failed command's note: bwrap's own complaint, a refusal, or nothing for an ordinary failure", () => {
  expect(explainSandboxFailure(ctx, "bwrap: Can't chdir to /x: No such file or directory\n")).toContain("bwrap could not set up this command");
  expect(explainSandboxFailure(ctx, "touch: cannot touch 'a': Read-only file system\n")).toContain('sandbox = "read-only": writable: only $TMPDIR; no network');
  expect(explainSandboxFailure(ctx, "curl: (6) Could not resolve host: example.org\n")).toContain("ran confined");
  expect(explainSandboxFailure(ctx, "error: test failed, 3 of 10\n")).toBeUndefined();
});

test("network is unshared unless sandbox_network, and the workspace is bound writable only under workspace-write", () => {
  const plan = { root: "/nonexistent/ws", cwd: "/nonexistent/ws", tmp: "/nonexistent/tmp", hidden: [] };
  const ro = bwrapArgs(ctx.settings, plan);
  expect(ro).toContain("--unshare-all");
  expect(ro).not.toContain("--share-net");
  expect(ro.join(" ")).not.toContain("--bind /nonexistent/ws /nonexistent/ws");
  const rw = bwrapArgs({ mode: "workspace-write", network: true, hide: [], allowDomains: [] }, plan);
  expect(rw).toContain("--share-net");
  expect(rw.join(" ")).toContain("--bind /nonexistent/ws /nonexistent/ws");
});
