// Owns checking a macOS binary's embedded code signature without macOS: the CodeDirectory's page
// hashes must match the file's bytes up to its code limit, and that limit must reach the signature
// (all code covered). Apple Silicon kills a binary whose signature does not verify, so the release
// refuses a darwin-arm64 binary that fails this; Intel Macs do not require one. Reads, never signs.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const MH_MAGIC_64 = 0xfeedfacf;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const HASH_TYPES: Record<number, string> = { 1: "sha1", 2: "sha256" };

/** Undefined when the signature verifies; else what is wrong with it. */
export function checkMachoSignature(file: string): string | undefined {
  const b = readFileSync(file);
  if (b.length < 32 || b.readUInt32LE(0) !== MH_MAGIC_64) return "not a 64-bit Mach-O file";
  let sigOffset: number | undefined;
  for (let i = 0, at = 32, n = b.readUInt32LE(16); i < n && at + 8 <= b.length; i++, at += b.readUInt32LE(at + 4)) {
    if (b.readUInt32LE(at) === LC_CODE_SIGNATURE) sigOffset = b.readUInt32LE(at + 8);
  }
  if (sigOffset === undefined) return "it is not signed (no LC_CODE_SIGNATURE)";
  if (b.readUInt32BE(sigOffset) !== CSMAGIC_EMBEDDED_SIGNATURE) return "its signature is not an embedded signature blob";
  const count = b.readUInt32BE(sigOffset + 8);
  for (let i = 0; i < count; i++) {
    const cd = sigOffset + b.readUInt32BE(sigOffset + 16 + i * 8);
    if (b.readUInt32BE(cd) !== CSMAGIC_CODEDIRECTORY) continue;
    const hashOffset = b.readUInt32BE(cd + 16);
    const codeSlots = b.readUInt32BE(cd + 28);
    const codeLimit = b.readUInt32BE(cd + 32);
    const hashSize = b[cd + 36]!;
    const algorithm = HASH_TYPES[b[cd + 37]!];
    const pageSize = 2 ** b[cd + 39]!;
    if (algorithm === undefined) return `unknown hash type ${b[cd + 37]}`;
    if (codeLimit !== sigOffset) return `it covers the first ${codeLimit} bytes only, not all ${sigOffset} before the signature`;
    let bad = 0;
    for (let page = 0; page < codeSlots; page++) {
      const start = page * pageSize;
      const want = b.subarray(cd + hashOffset + page * hashSize, cd + hashOffset + (page + 1) * hashSize);
      const got = createHash(algorithm).update(b.subarray(start, Math.min(start + pageSize, codeLimit))).digest().subarray(0, hashSize);
      if (!got.equals(want)) bad++;
    }
    return bad === 0 ? undefined : `${bad} of its ${codeSlots} page hashes do not match the file`;
  }
  return "its signature has no code directory";
}
