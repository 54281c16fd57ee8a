import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexCache } from "./index-cache.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-index-cache-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test("a saved copy round-trips with its validators; no temp file stays", async () => {
  const cache = new IndexCache(tmp);
  await cache.write("se/rd/serde", { body: '{"name":"serde"}\n', etag: '"abc"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" });
  const got = await cache.read("se/rd/serde");
  expect(got).toMatchObject({ body: '{"name":"serde"}\n', etag: '"abc"', lastModified: "Mon, 01 Jan 2024 00:00:00 GMT" });
  expect(readdirSync(join(tmp, "se", "rd"))).toEqual(["serde"]);
  await cache.remove("se/rd/serde");
  expect(await cache.read("se/rd/serde")).toBeUndefined();
});

test("a copy it cannot read counts as none", async () => {
  mkdirSync(join(tmp, "3", "a"), { recursive: true });
  writeFileSync(join(tmp, "3", "a", "abc"), "not json\nbody");
  expect(await new IndexCache(tmp).read("3/a/abc")).toBeUndefined();
});

test("fewer calls: a copy's folder is made when a write finds it missing, and a removed folder is made again", async () => {
  const dir = join(tmp, "on-demand");
  const cache = new IndexCache(dir);
  await cache.write("to/ki/tokio", { body: "a\n" });
  await cache.write("to/ki/tokio-util", { body: "b\n" });
  rmSync(join(dir, "to"), { recursive: true });
  await cache.write("to/ki/tokio", { body: "c\n" });
  expect((await cache.read("to/ki/tokio"))?.body).toBe("c\n");
  expect(readdirSync(join(dir, "to", "ki"))).toEqual(["tokio"]);
});
