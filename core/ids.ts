// Owns the random and digest strings the agent needs on its start-up path (temp-file names, approval
// and session ids, short name hashes, server fingerprints) without loading node:crypto, which costs
// ~4.5 ms in a process that lives 40 ms: random bytes come from Web Crypto, and a digest loads the
// module on its first (rare) use.

/** `bytes` random bytes as lower-case hex (2 characters each). */
export function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

/** A version-4 UUID. */
export function randomId(): string {
  return crypto.randomUUID();
}

/** The SHA-256 of `text` (UTF-8) as lower-case hex. */
export function sha256Hex(text: string): string {
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(text).digest("hex");
}
