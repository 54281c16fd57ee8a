import { expect, test } from "bun:test";
import { MAX_QUALIFIED_NAME_BYTES, qualifyToolName, sanitizeName } from "./naming.ts";

test("sanitizeName keeps letters, digits, _ and -, replaces everything else with _", () => {
  expect(sanitizeName("git-hub_2")).toBe("git-hub_2");
  expect(sanitizeName("my server.v2/ü")).toBe("my_server_v2__");
  expect(sanitizeName("名前")).toBe("__");
});

test("qualifyToolName joins server__tool and stays within 64 bytes, unique, readable", () => {
  const taken = new Set<string>();
  const take = (s: string, t: string) => {
    const n = qualifyToolName(s, t, taken);
    taken.add(n);
    return n;
  };
  expect(take("fs", "read_file")).toBe("fs__read_file");
  const dup = take("fs", "read.file");
  expect(dup).toMatch(/^fs__read_file_[0-9a-f]{6}$/);
  const long = take("server", "t".repeat(100));
  expect(long.length).toBe(MAX_QUALIFIED_NAME_BYTES);
  expect(long.startsWith("server__ttt")).toBe(true);
  const long2 = take("server", "t".repeat(101));
  expect(long2).not.toBe(long);
  expect(long2.length).toBe(MAX_QUALIFIED_NAME_BYTES);
  for (const n of taken) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
});

test("the same pair gets the same name in a fresh namespace (names stay stable across refreshes)", () => {
  const a = qualifyToolName("s", "x".repeat(90), new Set());
  const b = qualifyToolName("s", "x".repeat(90), new Set());
  expect(a).toBe(b);
});
