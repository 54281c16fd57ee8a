// Owns re-signing a macOS binary ad hoc without macOS (SPEC §11), as a linker signs: one CodeDirectory
// (ad hoc, linker-signed, SHA-256 over 4 KiB pages of every byte before the signature), replacing the
// old signature at the end of __LINKEDIT. Bun's darwin-x64 output keeps the runtime's signature, which
// no longer covers it, and macOS kills it at launch. Checking one is macho-signature.ts's.
import { readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";

const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CS_SUPPORTSEXECSEG = 0x20400;
const CS_ADHOC = 0x2;
const CS_LINKER_SIGNED = 0x20000;
const CS_EXECSEG_MAIN_BINARY = 0x1;
const CS_HASHTYPE_SHA256 = 2;
const HASH_SIZE = 32;
const PAGE_SHIFT = 12;
const PAGE = 1 << PAGE_SHIFT;
/** A CodeDirectory of version 0x20400 up to its execSegFlags. */
const CD_HEADER = 88;
/** __LINKEDIT's vmsize: its file size rounded up to 4 KiB, as the linker leaves it. */
const VM_PAGE = 0x1000;

interface Segment {
  at: number;
  name: string;
  fileoff: number;
  filesize: number;
}

function segments(b: Buffer): { segs: Segment[]; sigCmd: number } {
  if (b.length < 32 || b.readUInt32LE(0) !== MH_MAGIC_64) throw new Error("not a 64-bit Mach-O file");
  const segs: Segment[] = [];
  let sigCmd = -1;
  for (let i = 0, at = 32, n = b.readUInt32LE(16); i < n; i++, at += b.readUInt32LE(at + 4)) {
    const cmd = b.readUInt32LE(at);
    if (cmd === LC_SEGMENT_64) {
      const name = b.subarray(at + 8, at + 24).toString("latin1").replace(/\0+$/, "");
      segs.push({ at, name, fileoff: Number(b.readBigUInt64LE(at + 40)), filesize: Number(b.readBigUInt64LE(at + 48)) });
    }
    if (cmd === LC_CODE_SIGNATURE) sigCmd = at;
  }
  if (sigCmd < 0) throw new Error("it has no LC_CODE_SIGNATURE to replace");
  return { segs, sigCmd };
}

/**
 * Replaces `file`'s code signature with a fresh ad-hoc one named `identifier`, over its bytes as they
 * are. The old signature must sit at the end of __LINKEDIT, at the end of the file (as Bun and every
 * linker put it); anything else is refused rather than guessed at.
 */
export function signAdHoc(file: string, identifier: string): void {
  const old = readFileSync(file);
  const { segs, sigCmd } = segments(old);
  const dataoff = old.readUInt32LE(sigCmd + 8);
  const datasize = old.readUInt32LE(sigCmd + 12);
  const linkedit = segs.find((s) => s.name === "__LINKEDIT");
  const text = segs.find((s) => s.name === "__TEXT");
  if (!linkedit || !text) throw new Error("it has no __LINKEDIT or __TEXT segment");
  if (dataoff + datasize !== old.length || linkedit.fileoff + linkedit.filesize !== old.length) {
    throw new Error("its signature is not at the end of __LINKEDIT and of the file");
  }
  const slots = Math.ceil(dataoff / PAGE);
  const ident = Buffer.from(`${identifier}\0`, "utf8");
  const hashOffset = CD_HEADER + ident.length;
  const cdLength = hashOffset + slots * HASH_SIZE;
  const sigLength = 12 + 8 + cdLength;

  const b = Buffer.alloc(dataoff + sigLength);
  old.copy(b, 0, 0, dataoff);
  // The load commands first: they are in the first page, which the signature hashes.
  b.writeUInt32LE(sigLength, sigCmd + 12);
  const linkeditSize = dataoff + sigLength - linkedit.fileoff;
  b.writeBigUInt64LE(BigInt(linkeditSize), linkedit.at + 48);
  b.writeBigUInt64LE(BigInt(Math.ceil(linkeditSize / VM_PAGE) * VM_PAGE), linkedit.at + 32);

  let at = dataoff;
  const u32 = (v: number) => ((b.writeUInt32BE(v, at), (at += 4)));
  const u64 = (v: number) => ((b.writeBigUInt64BE(BigInt(v), at), (at += 8)));
  u32(CSMAGIC_EMBEDDED_SIGNATURE);
  u32(sigLength);
  u32(1); // one blob: the CodeDirectory, in the code directory slot (0), right after the index
  u32(0);
  u32(20);
  const cd = at;
  u32(CSMAGIC_CODEDIRECTORY);
  u32(cdLength);
  u32(CS_SUPPORTSEXECSEG);
  u32(CS_ADHOC | CS_LINKER_SIGNED);
  u32(hashOffset);
  u32(CD_HEADER); // identOffset
  u32(0); // nSpecialSlots: no requirements, entitlements or Info.plist
  u32(slots);
  u32(dataoff); // codeLimit
  b[at++] = HASH_SIZE;
  b[at++] = CS_HASHTYPE_SHA256;
  b[at++] = 0; // platform
  b[at++] = PAGE_SHIFT;
  u32(0); // spare2
  u32(0); // scatterOffset
  u32(0); // teamOffset
  u32(0); // spare3
  u64(0); // codeLimit64 (the 32-bit limit holds it)
  u64(text.fileoff); // execSegBase
  u64(text.filesize); // execSegLimit
  u64(CS_EXECSEG_MAIN_BINARY);
  ident.copy(b, cd + CD_HEADER);
  for (let page = 0; page < slots; page++) {
    const start = page * PAGE;
    createHash("sha256").update(b.subarray(start, Math.min(start + PAGE, dataoff))).digest().copy(b, cd + hashOffset + page * HASH_SIZE);
  }
  writeFileSync(file, b);
}
