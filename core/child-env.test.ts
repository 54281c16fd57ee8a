import { expect, test } from "bun:test";
import { passEnvNames, shellEnv } from "./child-env.ts";

const parent = { PATH: "/bin", HOME: "/h", LC_ALL: "C", TENDRIL_SHIM_OUTPUT_BYTES: "1000", ANTHROPIC_API_KEY: "k", AWS_SECRET_ACCESS_KEY: "s", GITHUB_TOKEN: "t" };

test("a shell command gets the whitelist and TENDRIL_* settings, never API keys or cloud secrets", () => {
  expect(shellEnv(parent)).toEqual({ PATH: "/bin", HOME: "/h", LC_ALL: "C", TENDRIL_SHIM_OUTPUT_BYTES: "1000" });
});

test("names passed through are added when set, skipped when not", () => {
  expect(shellEnv(parent, ["GITHUB_TOKEN", "NOT_SET"])).toEqual({ PATH: "/bin", HOME: "/h", LC_ALL: "C", TENDRIL_SHIM_OUTPUT_BYTES: "1000", GITHUB_TOKEN: "t" });
});

test("passEnvNames: the flag over TENDRIL_PASS_ENV; names separated by commas; empty is none; anything else is refused naming it", () => {
  expect(passEnvNames("GITHUB_TOKEN, NPM_TOKEN,_X1", { TENDRIL_PASS_ENV: "OTHER" })).toEqual(["GITHUB_TOKEN", "NPM_TOKEN", "_X1"]);
  expect(passEnvNames(undefined, { TENDRIL_PASS_ENV: "OTHER" })).toEqual(["OTHER"]);
  expect(passEnvNames(undefined, {})).toEqual([]);
  expect(passEnvNames("  ", { TENDRIL_PASS_ENV: "OTHER" })).toEqual([]);
  expect(() => passEnvNames("A,,B", {})).toThrow('--pass-env takes variable names separated by commas (letters, digits, _), got ""');
  expect(() => passEnvNames(undefined, { TENDRIL_PASS_ENV: "1X" })).toThrow('TENDRIL_PASS_ENV takes variable names separated by commas (letters, digits, _), got "1X"');
  expect(() => passEnvNames("A=b", {})).toThrow('got "A=b"');
});
