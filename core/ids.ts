// Owns the random and digest strings the agent needs on its start-up path (temp-file names, approval
// and session ids, short name hashes, server fingerprints) without loading node:crypto, which costs
// ~4.5 ms in a process that lives 40 ms: random bytes come from Web Crypto, and a digest loads the
// module on its first (rare) use. The one owner of SHA-256 (names, fingerprints, crate checksums, release sums).

/** `bytes` random bytes as lower-case hex (2 characters each). */
export function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

/** A version-4 UUID. */
export function randomId(): string {
  return crypto.randomUUID();
}

/** An incremental SHA-256 (for bodies that stream through it). */
export interface Sha256 {
  update(chunk: Uint8Array | string): void;
  /** The digest as lower-case hex; call once, at the end. */
  hex(): string;
}

export function sha256(): Sha256 {
  const h = process.getBuiltinModule("node:crypto").createHash("sha256");
  return { update: (chunk) => void h.update(chunk), hex: () => h.digest("hex") };
}

/** The SHA-256 of `data` (a string as UTF-8) as lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(data).digest("hex");
}

/** The SHA-256 of a file's bytes as lower-case hex, read as a stream (release archives are large). */
export function sha256File(path: string): Promise<string> {
  const h = sha256();
  return new Promise((done, fail) => {
    process
      .getBuiltinModule("node:fs")
      .createReadStream(path)
      .on("data", (c) => h.update(c))
      .on("error", fail)
      .on("end", () => done(h.hex()));
  });
}
