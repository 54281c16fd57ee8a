import { expect, test } from "bun:test";
import { canonicalJson, fingerprint } from "./fingerprint.ts";
import type { McpServerSpec } from "./types.ts";

const base: McpServerSpec = { name: "a", transport: "stdio", command: "/bin/x", args: ["-v"], env: { B: "2", A: "1" } };

test("canonicalJson sorts keys at every depth and drops undefined", () => {
  expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: undefined }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"z":0}]},"b":1}');
});

test("the name is a label: same structure, same fingerprint; key order does not matter", () => {
  const renamed = { ...base, name: "other", env: { A: "1", B: "2" } };
  expect(fingerprint(renamed, "/w")).toBe(fingerprint(base, "/w"));
  expect(fingerprint(base, "/w")).toMatch(/^[0-9a-f]{64}$/);
});

test("command, args, env, working directory, url, headers and transport each change it", () => {
  const fp = fingerprint(base, "/w");
  expect(fingerprint({ ...base, command: "/bin/y" }, "/w")).not.toBe(fp);
  expect(fingerprint({ ...base, args: ["-q"] }, "/w")).not.toBe(fp);
  expect(fingerprint({ ...base, env: { A: "1" } }, "/w")).not.toBe(fp);
  expect(fingerprint(base, "/elsewhere")).not.toBe(fp);
  expect(fingerprint({ ...base, cwd: "/w" }, "/elsewhere")).toBe(fp);
  const http: McpServerSpec = { name: "h", transport: "http", url: "http://127.0.0.1:1/mcp", headers: { X: "1" } };
  expect(fingerprint({ ...http, headers: { X: "2" } }, "/w")).not.toBe(fingerprint(http, "/w"));
  expect(fingerprint({ ...http, url: "http://127.0.0.1:2/mcp" }, "/w")).not.toBe(fingerprint(http, "/w"));
  expect(fingerprint({ ...http, transport: "sse" }, "/w")).not.toBe(fingerprint(http, "/w"));
  // The session's directory does not matter to a remote server.
  expect(fingerprint(http, "/a")).toBe(fingerprint(http, "/b"));
});
