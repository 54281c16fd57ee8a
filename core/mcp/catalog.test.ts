import { expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../limits.ts";
import { buildCatalog, clampDescription, DESCRIPTION_MARKER } from "./catalog.ts";

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

test("clampDescription leaves short text alone and cuts long text on a UTF-8 boundary with the marker", () => {
  expect(clampDescription("short", 100)).toBe("short");
  const long = "é".repeat(200); // 400 bytes
  const clamped = clampDescription(long, 101);
  expect(Buffer.byteLength(clamped)).toBeLessThanOrEqual(101);
  expect(clamped.endsWith(DESCRIPTION_MARKER)).toBe(true);
  expect(clamped).not.toContain("\uFFFD");
});

test("buildCatalog routes qualified names back to (slot, tool) and flags hooks and readOnly", () => {
  const cat = buildCatalog(
    [
      { label: "a", tools: [{ name: "x", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }] },
      { label: "b", tools: [{ name: "x", inputSchema: { type: "object" } }, { name: "_Stop", inputSchema: { type: "object" } }] },
    ],
    DEFAULT_LIMITS,
    quiet,
    new Set(),
  );
  expect(cat.infos.map((i) => [i.qualifiedName, i.readOnly, i.hook])).toEqual([
    ["a__x", true, false],
    ["b__x", false, false],
    ["b___Stop", false, true],
  ]);
  expect(cat.routes.get("b__x")).toEqual({ slot: 1, tool: "x" });
});

test("a tool without a usable schema gets an empty object schema instead of crashing", () => {
  const cat = buildCatalog([{ label: "a", tools: [{ name: "x" } as never, { nope: 1 } as never] }], DEFAULT_LIMITS, quiet, new Set());
  expect(cat.infos.map((i) => i.inputSchema)).toEqual([{ type: "object" }]);
});
