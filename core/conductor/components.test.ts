import { expect, test } from "bun:test";
import { ComponentError, parseComponents, shortName } from "./components.ts";

const ENV = { PATH: "/usr/bin:/bin" };

test("component strings are shell-split, leading NAME=value words become env, names are short", () => {
  const [c] = parseComponents(["A=1 B='two words' sh -c 'echo hi' x.ts"], ENV, "/");
  expect(c!.env).toEqual({ A: "1", B: "two words" });
  expect(c!.command).toBe("sh");
  expect(c!.args).toEqual(["-c", "echo hi", "x.ts"]);
  expect(shortName({ env: {}, command: "/opt/bun", args: ["run", "proxies/audit.ts"] })).toBe("audit.ts");
  expect(shortName({ env: {}, command: "/usr/local/bin/tendril", args: ["agent"] })).toBe("tendril agent");
  expect(shortName({ env: {}, command: "/x/claude-code-acp", args: [] })).toBe("claude-code-acp");
  expect(shortName({ env: {}, command: "sh", args: ["-c", "exec my-agent --x"] })).toBe("sh");
});

test("a component that cannot start is named with its position before anything runs", () => {
  expect(() => parseComponents(["sh", "nope-not-here --x"], ENV, "/")).toThrow(ComponentError);
  expect(() => parseComponents(["sh", "nope-not-here --x"], ENV, "/")).toThrow('component 2 "nope-not-here --x": "nope-not-here": not found on PATH');
  expect(() => parseComponents(["'unterminated"], ENV, "/")).toThrow("component 1");
  expect(() => parseComponents(["./missing/x"], ENV, "/")).toThrow("no such executable file");
});
