import { afterAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApprovalStore } from "./approvals.ts";
import { createPolicy } from "./policy.ts";

const dir = mkdtempSync(join(tmpdir(), "tendril-approvals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shell = (command: string) => ({ qualifiedName: "dev__shell", tool: "shell", input: { command }, readOnly: false });

test("an always-answer applies in a later session of the same workspace only, until revoked", () => {
  const state = join(dir, "a");
  const first = createPolicy({ rules: [], mode: "ask", workspace: "/w", approvals: new ApprovalStore(state) });
  first.remember(shell("git status"), "allow");
  // A new process: a new store over the same state dir.
  const store = new ApprovalStore(state);
  const later = createPolicy({ rules: [], mode: "ask", workspace: "/w", approvals: store });
  expect(later.decide(shell("git status -s"))).toEqual({ decision: "allow", why: "allowed always in /w" });
  expect(later.decide(shell("rm -rf x")).decision).toBe("ask");
  expect(createPolicy({ rules: [], mode: "ask", workspace: "/elsewhere", approvals: store }).decide(shell("git status -s")).decision).toBe("ask");
  const [a] = store.list("/w");
  expect(a).toMatchObject({ decision: "allow", tool: "dev__shell", scope: "dev__shell git status", workspace: "/w" });
  expect(store.revoke(a!.id)).toBe(true);
  expect(store.revoke(a!.id)).toBe(false);
  expect(later.decide(shell("git status -s")).decision).toBe("ask");
});

test("a newer answer for the same scope replaces the older; a damaged line is skipped", () => {
  const store = new ApprovalStore(join(dir, "b"));
  store.add({ decision: "allow", tool: "dev__shell", scope: "dev__shell npm", workspace: "/w" });
  appendFileSync(store.file, "{not json\n");
  store.add({ decision: "reject", tool: "dev__shell", scope: "dev__shell npm", workspace: "/w" });
  expect(store.list().map((a) => a.decision)).toEqual(["reject"]);
  expect(store.lookup("/w", "dev__shell npm")).toBe("reject");
});

test("two processes granting at once lose neither write", async () => {
  const state = join(dir, "c");
  const script = (tag: string) =>
    `import { ApprovalStore } from ${JSON.stringify(new URL("./approvals.ts", import.meta.url).pathname)};
const s = new ApprovalStore(${JSON.stringify(state)});
for (let i = 0; i < 200; i++) s.add({ decision: "allow", tool: "t__x", scope: "t__x ${tag}" + i, workspace: "/w" });`;
  const run = (tag: string) =>
    new Promise<number | null>((resolve) => spawn(process.execPath, ["-e", script(tag)], { stdio: "inherit" }).on("exit", resolve));
  expect(await Promise.all([run("a"), run("b")])).toEqual([0, 0]);
  expect(new ApprovalStore(state).list().length).toBe(400);
});
