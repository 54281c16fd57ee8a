// Owns the .crate checksum: SHA-256 against the index's `cksum` (or Cargo.lock's `checksum`).
import { sha256Hex } from "../../core/ids.ts";
import { CrateError } from "./errors.ts";

/** Throws a "checksum" CrateError naming both sums when `bytes` do not hash to `expected`. */
export function verifyChecksum(bytes: Uint8Array, expected: string, what: string): void {
  checkDigest(sha256Hex(bytes), expected, what);
}

/** The same for a digest computed while streaming. */
export function checkDigest(got: string, expected: string, what: string): void {
  if (got !== expected.toLowerCase()) {
    throw new CrateError("checksum", `${what}: checksum mismatch: expected sha256 ${expected.toLowerCase()}, got ${got}`);
  }
}
