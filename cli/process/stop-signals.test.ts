import { expect, test } from "bun:test";
import { releaseOnStop, signalExitCode, watchStopSignals } from "./stop-signals.ts";

// The handlers are driven with process.emit: no real signal reaches the test runner.
const send = (sig: "SIGHUP" | "SIGINT" | "SIGTERM") => (process.emit as (event: string) => boolean)(sig);

test("each stop signal's exit code is 128 + its number", () => {
  expect([signalExitCode("SIGHUP"), signalExitCode("SIGINT"), signalExitCode("SIGTERM")]).toEqual([129, 130, 143]);
});

test("a stop runs the releases before anything waits, and a second signal finds them done", async () => {
  const order: string[] = [];
  const removeRelease = releaseOnStop(() => order.push("released"));
  const watch = watchStopSignals();
  const stopped = watch.stopped.then((sig) => order.push(`stopped by ${sig}`));
  send("SIGHUP");
  expect(order).toEqual(["released"]); // synchronously, inside the handler
  send("SIGTERM"); // still caught: the first one decides
  await stopped;
  expect(order).toEqual(["released", "released", "stopped by SIGHUP"]);
  watch.dispose();
  removeRelease();
  expect(process.listenerCount("SIGHUP")).toBe(0);
});

test("an absorbed SIGINT does not stop; a second within the repeat window does", async () => {
  let running = 1;
  const watch = watchStopSignals({ interrupt: { absorb: () => running-- > 0, repeatMs: 60_000 } });
  let stoppedBy: string | undefined;
  void watch.stopped.then((sig) => (stoppedBy = sig));
  send("SIGINT");
  await Promise.resolve();
  expect(stoppedBy).toBeUndefined();
  send("SIGINT");
  await watch.stopped;
  expect(stoppedBy).toBe("SIGINT");
  watch.dispose();
});
