import { expect, test } from "bun:test";
import { ProgressLine } from "./progress-line.ts";

test("the progress line sums every crate of the call: bar, bytes, rate, crates done", () => {
  const line = new ProgressLine(0);
  expect(line.active).toBe(false);
  line.update({ crate: "serde 1.0.0", received: 512 * 1024, total: 1024 * 1024, done: false });
  line.update({ crate: "anyhow 1.0.5", received: 1024 * 1024, total: 1024 * 1024, done: true });
  const text = line.render(1000);
  expect(text).toStartWith("[##################......] 1.5 MiB / 2.0 MiB");
  expect(text).toContain("1.5 MiB/s");
  expect(text).toContain("1/2 crates  serde 1.0.0");
});

test("without a known total there is no bar, only bytes", () => {
  const line = new ProgressLine(0);
  line.update({ crate: "x 1.0.0", received: 2048, done: false });
  expect(line.render(2000)).toBe("2 KiB  1 KiB/s  0/1 crates  x 1.0.0");
});
