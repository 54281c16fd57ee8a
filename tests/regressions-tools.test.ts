// Regression tests of the tools side, each named after the bug it pins, run through the built binary:
// the str_replace symlink race, leaked shim folders, orphaned shell groups after SIGKILL, dev-mcp's
// answers to malformed lines, and temp files left by interrupted edits.
import { afterAll, afterEach, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callTool, startDevMcp, stopDevMcps } from "./dev-mcp-harness.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-regress-tools-")));
afterEach(stopDevMcps);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A fresh directory under the test's base. */
function scratch(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

// Swaps `sub` between the real directory and a symlink to ../outside as fast as it can.
const SWAPPER = `
const { existsSync, renameSync, symlinkSync, unlinkSync } = require("node:fs");
const [root, stop, until] = process.argv.slice(2);
process.chdir(root);
let swaps = 0;
while (Date.now() < Number(until) && !existsSync(stop)) {
  try {
    renameSync("sub", "sub.real");
    symlinkSync("../outside", "sub");
    unlinkSync("sub");
    renameSync("sub.real", "sub");
    swaps++;
  } catch {}
}
console.log(swaps);
`;

test("str_replace symlink race: a process swapping sub/ for a symlink to ../outside never gets a write outside the root", async () => {
  const dir = scratch("race");
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, "sub", "victim.txt"), "aaa\n");
  writeFileSync(join(outside, "victim.txt"), "aaa\n");
  const script = join(dir, "swapper.cjs");
  writeFileSync(script, SWAPPER);
  const stop = join(dir, "stop");
  const { client } = await startDevMcp(root, scratch("race-home"));
  const swapper = spawn(process.execPath, [script, root, stop, String(Date.now() + 30_000)], { stdio: ["ignore", "pipe", "inherit"] });
  let swaps = "";
  swapper.stdout.on("data", (b: Buffer) => (swaps += b.toString()));
  const done = new Promise<void>((r) => swapper.once("exit", () => r()));
  try {
    const t0 = Date.now();
    for (let i = 0; i < 300 && Date.now() - t0 < 15_000; i++) {
      const [from, to] = i % 2 === 0 ? ["aaa", "bbb"] : ["bbb", "aaa"];
      await callTool(client, "str_replace", { path: "sub/victim.txt", old_str: from, new_str: to });
      await callTool(client, "str_replace", { path: "sub/victim.txt", old_str: to, new_str: from });
      await callTool(client, "str_replace", { path: `sub/new-${i}.txt`, old_str: "", new_str: "new\n" });
      await callTool(client, "str_replace", { path: `sub/deep-${i}/x.txt`, old_str: "", new_str: "deep\n" });
    }
  } finally {
    writeFileSync(stop, "");
    await done;
  }
  expect(Number(swaps)).toBeGreaterThan(0);
  expect(readdirSync(outside)).toEqual(["victim.txt"]);
  expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("aaa\n");
}, 60_000);
