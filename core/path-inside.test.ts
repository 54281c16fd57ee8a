import { expect, test } from "bun:test";
import { isInside } from "./path-inside.ts";

test("inside: the root itself and below it; outside: parents, siblings sharing a prefix, escapes", () => {
  const table: [string, string, boolean][] = [
    ["/w", "/w", true],
    ["/w", "/w/a/b", true],
    ["/w", "a/b", true],
    ["/w", "/w/..foo", true],
    ["/w/", "/w/a", true],
    ["/w", "/", false],
    ["/w", "/wx/a", false],
    ["/w", "../w2", false],
    ["/w", "/w/a/../../etc", false],
    ["/", "/etc", true],
  ];
  for (const [root, path, inside] of table) expect({ root, path, inside: isInside(root, path) }).toEqual({ root, path, inside });
});
