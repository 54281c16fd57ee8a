import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PendingRequests } from "./pending.ts";

test("requests get ids in order from the first one, and each waiting entry is taken exactly once", () => {
  const p = new PendingRequests<string>(1);
  expect([p.add("a"), p.add("b"), p.add("c")]).toEqual([1, 2, 3]);
  expect(p.nextId).toBe(4);
  expect(p.take(2)).toBe("b");
  expect(p.take(2)).toBeUndefined(); // a second answer to the same id settles nothing
  expect(p.take(null)).toBeUndefined();
  expect(p.take(99)).toBeUndefined();
  expect(p.has(1)).toBe(true);
  expect(p.takeAll()).toEqual(["a", "c"]);
  expect(p.size).toBe(0);
  expect(p.add("d")).toBe(4); // ids are never reused
});

test("one owner of JSON-RPC request ids: the peer, the router, the MCP-over-ACP client requests keep no id counter of their own", () => {
  const core = join(import.meta.dir, "..");
  const own: string[] = [];
  for (const dir of ["wire", "conductor", "mcp", "acp-client", "acp"]) {
    for (const e of readdirSync(join(core, dir), { recursive: true, withFileTypes: true })) {
      if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".test.ts") || e.name === "pending.ts") continue;
      const text = readFileSync(join(e.parentPath, e.name), "utf8");
      if (/\b(?:#?nextId|#next)\s*\+\+|\+\+\s*(?:this\.)?#?next(?:Id)?\b|new Map<JsonRpcId, \(/.test(text)) own.push(join(dir, e.name));
    }
  }
  expect(own).toEqual([]);
});
