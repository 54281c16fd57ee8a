// Owns how the sandbox suites find bubblewrap, and what they do when it is missing: skipped with a
// warning on a developer's machine, a failing test under CI=true (the gate must not pass by skipping
// the sandbox). Test-only.
import { existsSync } from "node:fs";
import { test } from "bun:test";

/** Where a system bwrap lives; undefined when none is installed. */
export const BWRAP = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"].find((p) => existsSync(p));

/** Call once per suite file: under CI a missing bwrap fails the run; elsewhere it is said once. */
export function requireBwrapUnderCi(file: string, ci = process.env.CI): void {
  if (BWRAP) return;
  if (ci !== "true") {
    console.warn(`${file}: bwrap (Debian package bubblewrap) is not installed: the sandbox tests are skipped`);
    return;
  }
  test("B7: the sandbox tests need bwrap where CI runs them", () => {
    throw new Error(`${file}: CI=true and bwrap (Debian package bubblewrap) is not installed, so the sandbox tests would be skipped; install it (apt-get install bubblewrap), as .ci/run does`);
  });
}
