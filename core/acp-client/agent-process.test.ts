// Unit test of AgentProcess's stderr tail: bounded in bytes (not UTF-16 units) and never cut mid-character.
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { AgentProcess } from "./agent-process.ts";

test("the stderr tail holds at most 4 KiB of UTF-8 and whole characters", async () => {
  const script = "for i in $(seq 1 3000); do printf 'é😀'; done >&2";
  const agent = new AgentProcess({ command: "bash", args: ["-c", script], env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd: tmpdir() }, () => {});
  await agent.exited;
  const tail = agent.stderrTail().join("\n");
  expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(4096);
  expect(Buffer.byteLength(tail)).toBeGreaterThan(4090);
  expect(tail).not.toContain("\uFFFD");
  expect(tail.endsWith("é😀")).toBe(true);
});
