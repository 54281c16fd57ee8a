import { expect, test } from "bun:test";
import { downloadUrl, indexPath, namePrefix, parseIndexFile } from "./index-client.ts";

test("index paths follow cargo's layout, lower-cased", () => {
  expect(indexPath("a")).toBe("1/a");
  expect(indexPath("ab")).toBe("2/ab");
  expect(indexPath("abc")).toBe("3/a/abc");
  expect(indexPath("Serde")).toBe("se/rd/serde");
  expect(namePrefix("Serde")).toBe("Se/rd");
});

test("download templates: markers filled, none means /{crate}/{version}/download appended", () => {
  expect(downloadUrl("https://static.crates.io/crates", "serde", "1.0.0", "ab")).toBe("https://static.crates.io/crates/serde/1.0.0/download");
  expect(downloadUrl("https://x/dl/", "serde", "1.0.0", "ab")).toBe("https://x/dl/serde/1.0.0/download");
  expect(downloadUrl("https://x/{prefix}/{lowerprefix}/{crate}/{crate}-{version}.crate?sum={sha256-checksum}", "Serde", "1.0.0", "ab")).toBe(
    "https://x/Se/rd/se/rd/Serde/Serde-1.0.0.crate?sum=ab",
  );
});

test("index lines: cksum and yanked read; malformed lines and unsafe names or versions skipped", () => {
  const [ab, cd] = ["AB".repeat(32), "cd".repeat(32)];
  const text = [
    JSON.stringify({ name: "x", vers: "1.0.0", cksum: ab, yanked: false, deps: [] }),
    "not json",
    JSON.stringify({ name: "x", vers: "1.1.0" }),
    JSON.stringify({ name: "x", vers: "1.2.0", cksum: cd, yanked: true }),
    JSON.stringify({ name: "../../x", vers: "1.3.0", cksum: cd }),
    JSON.stringify({ name: "x", vers: "../1.4.0", cksum: cd }),
    JSON.stringify({ name: "x", vers: "1.5.0", cksum: "not-hex" }),
    "",
  ].join("\n");
  expect(parseIndexFile(text)).toEqual([
    { name: "x", vers: "1.0.0", cksum: ab.toLowerCase(), yanked: false },
    { name: "x", vers: "1.2.0", cksum: cd, yanked: true },
  ]);
});
