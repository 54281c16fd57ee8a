// Ad-hoc re-signing (SPEC §11) on a small Mach-O made here: a binary whose bytes changed after it was
// signed (as Bun's darwin-x64 output is) verifies again once re-signed, with the signature resized to
// fit at the end of __LINKEDIT; a changed byte afterwards breaks it; a layout it cannot re-sign is
// refused. (The release test re-signs Bun's real darwin binaries and checks them the same way.)
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signAdHoc } from "./macho-sign.ts";
import { checkMachoSignature } from "./macho-signature.ts";

const dir = mkdtempSync(join(tmpdir(), "tendril-macho-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXT = 0x3000; // three pages of "code"
const LINKEDIT_DATA = 0x100; // symbol tables and the like, before the signature

/** A 64-bit Mach-O executable: __TEXT, __LINKEDIT and an LC_CODE_SIGNATURE pointing at a placeholder. */
function machO(file: string): void {
  const cmds = 72 + 72 + 16;
  const b = Buffer.alloc(TEXT + LINKEDIT_DATA + 16);
  b.writeUInt32LE(0xfeedfacf, 0);
  b.writeUInt32LE(0x01000007, 4); // x86_64
  b.writeUInt32LE(3, 8);
  b.writeUInt32LE(2, 12); // MH_EXECUTE
  b.writeUInt32LE(3, 16);
  b.writeUInt32LE(cmds, 20);
  const segment = (at: number, name: string, vmaddr: number, fileoff: number, filesize: number) => {
    b.writeUInt32LE(0x19, at);
    b.writeUInt32LE(72, at + 4);
    b.write(name, at + 8, "latin1");
    b.writeBigUInt64LE(BigInt(vmaddr), at + 24);
    b.writeBigUInt64LE(BigInt(Math.ceil(filesize / 0x1000) * 0x1000), at + 32);
    b.writeBigUInt64LE(BigInt(fileoff), at + 40);
    b.writeBigUInt64LE(BigInt(filesize), at + 48);
  };
  segment(32, "__TEXT", 0x100000000, 0, TEXT);
  segment(104, "__LINKEDIT", 0x100000000 + TEXT, TEXT, LINKEDIT_DATA + 16);
  b.writeUInt32LE(0x1d, 176);
  b.writeUInt32LE(16, 180);
  b.writeUInt32LE(TEXT + LINKEDIT_DATA, 184);
  b.writeUInt32LE(16, 188);
  for (let i = cmds + 32; i < TEXT; i++) b[i] = (i * 31) & 0xff;
  b.writeUInt32BE(0xfade0cc0, TEXT + LINKEDIT_DATA); // an empty superblob: no code directory
  b.writeUInt32BE(16, TEXT + LINKEDIT_DATA + 4);
  writeFileSync(file, b);
}

test("a binary changed after it was signed verifies once re-signed ad hoc; a byte changed afterwards breaks it", () => {
  const file = join(dir, "tendril");
  machO(file);
  expect(checkMachoSignature(file)).toBe("its signature has no code directory");
  signAdHoc(file, "tendril");
  expect(checkMachoSignature(file)).toBeUndefined();
  // As Bun does to the runtime it compiles onto: bytes change after the signature was made.
  const b = readFileSync(file);
  b[0x1800] = b[0x1800]! ^ 0xff;
  writeFileSync(file, b);
  expect(checkMachoSignature(file)).toBe("1 of its 4 page hashes do not match the file");
  signAdHoc(file, "tendril");
  expect(checkMachoSignature(file)).toBeUndefined();
  // The signature grew to hash every page and still ends the file, __LINKEDIT and LC_CODE_SIGNATURE.
  const signed = readFileSync(file);
  const dataoff = signed.readUInt32LE(184);
  const datasize = signed.readUInt32LE(188);
  expect(dataoff + datasize).toBe(signed.length);
  expect(Number(signed.readBigUInt64LE(104 + 40) + signed.readBigUInt64LE(104 + 48))).toBe(signed.length);
  expect(signed.subarray(dataoff + 20 + 88, dataoff + 20 + 96).toString("latin1")).toBe("tendril\0");
  // Signing is a function of the bytes: again gives the same file.
  signAdHoc(file, "tendril");
  expect(readFileSync(file).equals(signed)).toBe(true);
});

test("a binary whose signature is not at the end of the file is refused, not guessed at", () => {
  const file = join(dir, "trailing");
  machO(file);
  appendFileSync(file, Buffer.alloc(64));
  expect(() => signAdHoc(file, "tendril")).toThrow("not at the end of __LINKEDIT");
});
