import { expect, test } from "bun:test";
import { atLeastAsStrict } from "./sandbox-modes.ts";

test("read-only confines more than workspace-write, which confines more than off", () => {
  expect(atLeastAsStrict("read-only", "workspace-write")).toBe(true);
  expect(atLeastAsStrict("workspace-write", "off")).toBe(true);
  expect(atLeastAsStrict("workspace-write", "workspace-write")).toBe(true);
  expect(atLeastAsStrict("off", "workspace-write")).toBe(false);
  expect(atLeastAsStrict("workspace-write", "read-only")).toBe(false);
});
