import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inheritedEnv, passEnvNames, shellEnv, withPathFirst } from "./child-env.ts";

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

test("an agent or a conductor component gets all of ours (its keys too) under what was declared; unset entries are dropped", () => {
  expect(inheritedEnv({ ...parent, GONE: undefined }, { HOME: "/declared", EXTRA: "x" })).toEqual({ ...parent, HOME: "/declared", EXTRA: "x" });
});

test("the shims' folder goes first on PATH, or is the whole PATH when there was none", () => {
  expect(withPathFirst({ PATH: "/bin:/usr/bin", HOME: "/h" }, "/tmp/shims")).toEqual({ PATH: "/tmp/shims:/bin:/usr/bin", HOME: "/h" });
  expect(withPathFirst({ HOME: "/h" }, "/tmp/shims")).toEqual({ HOME: "/h", PATH: "/tmp/shims" });
});

test("one owner of children's environments: no module of cli/ or core/ spreads an env or puts a folder on PATH itself", () => {
  const root = join(import.meta.dir, "..");
  const own: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && rel !== join("core", "child-env.ts")) {
        const text = readFileSync(join(root, rel), "utf8");
        if (/env: \{ ?\.\.\.|\{ \.\.\.\w+(\.env)?, \.\.\.\w+\.env \}|PATH: [^\n]*\$\{/.test(text)) own.push(rel);
      }
    }
  };
  for (const d of ["cli", "core"]) walk(d);
  expect(own).toEqual([]);
});
