import { expect, test } from "bun:test";
import { DEFAULT_LIMITS, formatLimit, LIMIT_SPECS, LimitError, loadLimits, NOT_YET_IN_FORCE } from "./limits.ts";

test("defaults match the specification's table", () => {
  expect(DEFAULT_LIMITS.MAX_LINE_BYTES).toBe(4 * 1024 * 1024);
  expect(DEFAULT_LIMITS.MAX_TOOL_CALLS_PER_TURN).toBe(64);
  expect(DEFAULT_LIMITS.MAX_TOOL_RESULT_BYTES).toBe(50 * 1024);
  expect(DEFAULT_LIMITS.HANDOFF_RATIO).toBe(0.9);
  expect(DEFAULT_LIMITS.SHELL_TIMEOUT_S).toBe(120);
  expect(formatLimit("MAX_LINE_BYTES")).toBe("4 MiB");
  expect(formatLimit("TOOL_TIMEOUT_S")).toBe("660 s");
});

test("every limit in force is overridable by TENDRIL_<NAME>; the others are refused, not ignored", () => {
  for (const name of Object.keys(LIMIT_SPECS) as (keyof typeof LIMIT_SPECS)[]) {
    const v = name === "HANDOFF_RATIO" ? "0.5" : name === "SHELL_MAX_TIMEOUT_S" ? "700" : "7";
    if (NOT_YET_IN_FORCE[name]) expect(() => loadLimits({ [`TENDRIL_${name}`]: v })).toThrow(`TENDRIL_${name} has no effect`);
    else expect(loadLimits({ [`TENDRIL_${name}`]: v })[name]).toBe(Number(v));
  }
});

test("byte limits accept KiB/MiB suffixes and underscores", () => {
  expect(loadLimits({ TENDRIL_MAX_LINE_BYTES: "256" }).MAX_LINE_BYTES).toBe(256);
  expect(loadLimits({ TENDRIL_MAX_LINE_BYTES: "8MiB" }).MAX_LINE_BYTES).toBe(8 * 1024 * 1024);
  expect(loadLimits({ TENDRIL_MAX_LINE_BYTES: "1_000" }).MAX_LINE_BYTES).toBe(1000);
});

test("bad values are rejected with an error naming the variable and the value", () => {
  for (const [k, v] of [
    ["TENDRIL_MAX_LINE_BYTES", "lots"],
    ["TENDRIL_MAX_LINE_BYTES", "-1"],
    ["TENDRIL_MAX_LINE_BYTES", "0"],
    ["TENDRIL_TOOL_TIMEOUT_S", "10MiB"],
    ["TENDRIL_MAX_TOOLS", "1.5"],
    ["TENDRIL_TOOL_TIMEOUT_S", "0"],
    ["TENDRIL_TOOL_TIMEOUT_S", "1e3"],
    ["TENDRIL_KILL_GRACE_MS", "-5"],
  ] as const) {
    try {
      loadLimits({ [k]: v });
      throw new Error(`accepted ${k}=${v}`);
    } catch (err) {
      expect(err).toBeInstanceOf(LimitError);
      expect((err as Error).message).toContain(k);
      expect((err as Error).message).toContain(JSON.stringify(v));
    }
  }
});

test("a default shell timeout above the maximum is rejected", () => {
  expect(() => loadLimits({ TENDRIL_SHELL_TIMEOUT_S: "700" })).toThrow("SHELL_MAX_TIMEOUT_S");
});

test("retry counts may be 0; other counts may not", () => {
  expect(loadLimits({ TENDRIL_LLM_MAX_RETRIES: "0" }).LLM_MAX_RETRIES).toBe(0);
  expect(() => loadLimits({ TENDRIL_MAX_TOOLS: "0" })).toThrow("TENDRIL_MAX_TOOLS must be a positive integer");
});

test("times take fractions, so tests never wait for a real backoff", () => {
  expect(loadLimits({ TENDRIL_MCP_BACKOFF_FIRST_S: "0.01" }).MCP_BACKOFF_FIRST_S).toBe(0.01);
  expect(loadLimits({ TENDRIL_KILL_GRACE_MS: "2.5" }).KILL_GRACE_MS).toBe(2.5);
  expect(loadLimits({ TENDRIL_TOOL_TIMEOUT_S: ".5" }).TOOL_TIMEOUT_S).toBe(0.5);
});

test("crate limits: the retry backoff takes fractions; file counts and archive bytes stay whole", () => {
  expect(loadLimits({ TENDRIL_CRATES_RETRY_BACKOFF_S: "0.01" }).CRATES_RETRY_BACKOFF_S).toBe(0.01);
  expect(() => loadLimits({ TENDRIL_MAX_CRATE_FILES: "1.5" })).toThrow("TENDRIL_MAX_CRATE_FILES");
  expect(() => loadLimits({ TENDRIL_MAX_CRATE_BYTES: "1.5MiB" })).toThrow("TENDRIL_MAX_CRATE_BYTES");
  expect(() => loadLimits({ TENDRIL_CRATES_HTTP_TIMEOUT_S: "0.0" })).toThrow("TENDRIL_CRATES_HTTP_TIMEOUT_S");
});
