import { expect, test } from "bun:test";
import { unixSocketFilter } from "./seccomp.ts";

const ALLOW = "allow";
const EPERM = "EPERM";

/** Runs the classic-BPF program the kernel would for one call: what it returns. */
function run(prog: Uint8Array, data: { arch: number; nr: number; arg0?: number }): string {
  const view = new DataView(prog.buffer, prog.byteOffset, prog.byteLength);
  const word = (offset: number) => (offset === 0 ? data.nr : offset === 4 ? data.arch : offset === 16 ? (data.arg0 ?? 0) : 0);
  let a = 0;
  for (let pc = 0, steps = 0; pc * 8 < prog.length && steps < 1000; steps++) {
    const code = view.getUint16(pc * 8, true);
    const jt = view.getUint8(pc * 8 + 2);
    const jf = view.getUint8(pc * 8 + 3);
    const k = view.getUint32(pc * 8 + 4, true);
    if (code === 0x20) a = word(k) >>> 0, pc++;
    else if (code === 0x15) pc += 1 + (a === k ? jt : jf);
    else if (code === 0x06) return k === 0x7fff0000 ? ALLOW : k === 0x00050001 ? EPERM : `ret ${k.toString(16)}`;
    else throw new Error(`unexpected instruction ${code.toString(16)} at ${pc}`);
  }
  throw new Error("the program ran off its end");
}

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const AARCH64 = 0xc00000b7;
const ARM = 0x40000028;
const AF_UNIX = 1;
const AF_INET = 2;

test("socket(AF_UNIX) is refused with EPERM on every architecture a host can run; other families and other calls pass", () => {
  const prog = unixSocketFilter();
  const cases: [string, { arch: number; nr: number; arg0?: number }, string][] = [
    ["x86-64 socket(AF_UNIX)", { arch: X86_64, nr: 41, arg0: AF_UNIX }, EPERM],
    ["x86-64 socket(AF_INET)", { arch: X86_64, nr: 41, arg0: AF_INET }, ALLOW],
    ["x32 socket(AF_UNIX)", { arch: X86_64, nr: 0x40000029, arg0: AF_UNIX }, EPERM],
    ["x86-64 socketpair(AF_UNIX)", { arch: X86_64, nr: 53, arg0: AF_UNIX }, ALLOW],
    ["x86-64 connect", { arch: X86_64, nr: 42, arg0: 3 }, ALLOW],
    ["x86-64 read", { arch: X86_64, nr: 0, arg0: 1 }, ALLOW],
    ["x86-64 io_uring_setup", { arch: X86_64, nr: 425 }, EPERM],
    ["i386 socket(AF_UNIX)", { arch: I386, nr: 359, arg0: AF_UNIX }, EPERM],
    ["i386 socket(AF_INET)", { arch: I386, nr: 359, arg0: AF_INET }, ALLOW],
    ["i386 socketcall(SYS_SOCKET)", { arch: I386, nr: 102, arg0: 1 }, EPERM],
    ["i386 socketcall(SYS_CONNECT)", { arch: I386, nr: 102, arg0: 3 }, ALLOW],
    ["i386 io_uring_setup", { arch: I386, nr: 425 }, EPERM],
    ["arm64 socket(AF_UNIX)", { arch: AARCH64, nr: 198, arg0: AF_UNIX }, EPERM],
    ["arm64 socket(AF_INET6)", { arch: AARCH64, nr: 198, arg0: 10 }, ALLOW],
    ["arm64 socketpair(AF_UNIX)", { arch: AARCH64, nr: 199, arg0: AF_UNIX }, ALLOW],
    ["arm64 io_uring_setup", { arch: AARCH64, nr: 425 }, EPERM],
    ["arm socket(AF_UNIX)", { arch: ARM, nr: 281, arg0: AF_UNIX }, EPERM],
    ["arm socket(AF_INET)", { arch: ARM, nr: 281, arg0: AF_INET }, ALLOW],
    ["an unknown architecture's read", { arch: 0xc00000f3, nr: 63 }, EPERM],
  ];
  for (const [name, data, want] of cases) expect({ name, got: run(prog, data) }).toEqual({ name, got: want });
});

test("the program is whole instructions with every jump inside it", () => {
  const prog = unixSocketFilter();
  expect(prog.length % 8).toBe(0);
  const view = new DataView(prog.buffer, prog.byteOffset, prog.byteLength);
  const n = prog.length / 8;
  for (let pc = 0; pc < n; pc++) {
    if (view.getUint16(pc * 8, true) !== 0x15) continue;
    expect(pc + 1 + view.getUint8(pc * 8 + 2)).toBeLessThan(n);
    expect(pc + 1 + view.getUint8(pc * 8 + 3)).toBeLessThan(n);
  }
  expect(view.getUint16((n - 1) * 8, true)).toBe(0x06); // it ends with a return
});
