import { expect, test } from "bun:test";
import { LineWriter } from "./writer.ts";

test("messages are written one per line in call order, even with a slow sink", async () => {
  const lines: string[] = [];
  const dec = new TextDecoder();
  const writer = new LineWriter({
    async write(chunk) {
      await new Promise((r) => setTimeout(r, Math.random() * 2));
      lines.push(dec.decode(chunk));
    },
  });
  const sends = Array.from({ length: 100 }, (_, i) => writer.send({ i, text: "a\nb" }));
  await Promise.all(sends);
  expect(lines.length).toBe(100);
  lines.forEach((l, i) => {
    expect(l.endsWith("\n")).toBe(true);
    expect(l.slice(0, -1).includes("\n")).toBe(false);
    expect(JSON.parse(l)).toEqual({ i, text: "a\nb" });
  });
});

test("a failing sink rejects the send and closes the writer", async () => {
  const writer = new LineWriter({
    write: () => Promise.reject(new Error("EPIPE")),
  });
  await expect(writer.send({ a: 1 })).rejects.toThrow("EPIPE");
  await writer.flush();
  await expect(writer.send({ a: 2 })).rejects.toThrow("closed");
});
