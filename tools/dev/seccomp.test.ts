import { expect, test } from "bun:test";
import { sandboxFilter } from "./seccomp.ts";

const unixSocketFilter = () => sandboxFilter({ unixSockets: true });

const ALLOW = "allow";
const EPERM = "EPERM";
const ENOSYS = "ENOSYS";

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
    else if (code === 0x35) pc += 1 + (a >= k ? jt : jf);
    else if (code === 0x45) pc += 1 + ((a & k) !== 0 ? jt : jf);
    else if (code === 0x06) return k === 0x7fff0000 ? ALLOW : k === 0x00050001 ? EPERM : k === 0x00050026 ? ENOSYS : `ret ${k.toString(16)}`;
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
    ["x32 read (x32 is refused whole)", { arch: X86_64, nr: 0x40000000, arg0: 1 }, EPERM],
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

const CLONE_NEWUSER = 0x10000000;
const CLONE_THREAD_FLAGS = 0x3d0f00; // what pthread_create passes

test("A7: the baseline filter refuses new user namespaces, setns, the keyring, io_uring, bpf, perf events, userfaultfd and ptrace on every architecture, with or without sandbox_network; clone3 answers ENOSYS; threads, forks and unix sockets pass", () => {
  for (const unixSockets of [false, true]) {
    const prog = sandboxFilter({ unixSockets });
    const cases: [string, { arch: number; nr: number; arg0?: number }, string][] = [
      ["x86-64 unshare(CLONE_NEWUSER)", { arch: X86_64, nr: 272, arg0: CLONE_NEWUSER }, EPERM],
      ["x86-64 unshare(CLONE_NEWUSER|CLONE_NEWNS)", { arch: X86_64, nr: 272, arg0: CLONE_NEWUSER | 0x20000 }, EPERM],
      ["x86-64 unshare(CLONE_NEWNS)", { arch: X86_64, nr: 272, arg0: 0x20000 }, ALLOW],
      ["x86-64 clone(CLONE_NEWUSER)", { arch: X86_64, nr: 56, arg0: CLONE_NEWUSER | 17 }, EPERM],
      ["x86-64 clone(thread)", { arch: X86_64, nr: 56, arg0: CLONE_THREAD_FLAGS }, ALLOW],
      ["x86-64 clone(fork)", { arch: X86_64, nr: 56, arg0: 0x01200011 }, ALLOW],
      ["x86-64 clone3", { arch: X86_64, nr: 435 }, ENOSYS],
      ["x86-64 setns", { arch: X86_64, nr: 308 }, EPERM],
      ["x86-64 add_key", { arch: X86_64, nr: 248 }, EPERM],
      ["x86-64 request_key", { arch: X86_64, nr: 249 }, EPERM],
      ["x86-64 keyctl", { arch: X86_64, nr: 250 }, EPERM],
      ["x86-64 io_uring_setup", { arch: X86_64, nr: 425 }, EPERM],
      ["x86-64 bpf", { arch: X86_64, nr: 321 }, EPERM],
      ["x86-64 perf_event_open", { arch: X86_64, nr: 298 }, EPERM],
      ["x86-64 userfaultfd", { arch: X86_64, nr: 323 }, EPERM],
      ["x86-64 ptrace", { arch: X86_64, nr: 101 }, EPERM],
      ["x86-64 socket(AF_INET)", { arch: X86_64, nr: 41, arg0: AF_INET }, ALLOW],
      ["x86-64 openat", { arch: X86_64, nr: 257 }, ALLOW],
      ["i386 unshare(CLONE_NEWUSER)", { arch: I386, nr: 310, arg0: CLONE_NEWUSER }, EPERM],
      ["i386 clone(thread)", { arch: I386, nr: 120, arg0: CLONE_THREAD_FLAGS }, ALLOW],
      ["i386 add_key", { arch: I386, nr: 286 }, EPERM],
      ["i386 ptrace", { arch: I386, nr: 26 }, EPERM],
      ["arm64 unshare(CLONE_NEWUSER)", { arch: AARCH64, nr: 97, arg0: CLONE_NEWUSER }, EPERM],
      ["arm64 clone(CLONE_NEWUSER)", { arch: AARCH64, nr: 220, arg0: CLONE_NEWUSER }, EPERM],
      ["arm64 clone(thread)", { arch: AARCH64, nr: 220, arg0: CLONE_THREAD_FLAGS }, ALLOW],
      ["arm64 clone3", { arch: AARCH64, nr: 435 }, ENOSYS],
      ["arm64 setns", { arch: AARCH64, nr: 268 }, EPERM],
      ["arm64 keyctl", { arch: AARCH64, nr: 219 }, EPERM],
      ["arm64 bpf", { arch: AARCH64, nr: 280 }, EPERM],
      ["arm64 ptrace", { arch: AARCH64, nr: 117 }, EPERM],
      ["arm64 read", { arch: AARCH64, nr: 63 }, ALLOW],
      ["arm add_key", { arch: ARM, nr: 309 }, EPERM],
      ["arm unshare(CLONE_NEWUSER)", { arch: ARM, nr: 337, arg0: CLONE_NEWUSER }, EPERM],
    ];
    for (const [name, data, want] of cases) expect({ unixSockets, name, got: run(prog, data) }).toEqual({ unixSockets, name, got: want });
  }
  // the unix-socket refusal is sandbox_network's only
  expect(run(sandboxFilter({ unixSockets: false }), { arch: X86_64, nr: 41, arg0: AF_UNIX })).toBe(ALLOW);
  expect(run(sandboxFilter({ unixSockets: false }), { arch: I386, nr: 102, arg0: 1 })).toBe(ALLOW);
});

test("the program is whole instructions with every jump inside it", () => {
  for (const prog of [unixSocketFilter(), sandboxFilter({ unixSockets: false })]) checkJumps(prog);
});

function checkJumps(prog: Uint8Array): void {
  expect(prog.length % 8).toBe(0);
  const view = new DataView(prog.buffer, prog.byteOffset, prog.byteLength);
  const n = prog.length / 8;
  for (let pc = 0; pc < n; pc++) {
    if (![0x15, 0x35, 0x45].includes(view.getUint16(pc * 8, true))) continue;
    expect(pc + 1 + view.getUint8(pc * 8 + 2)).toBeLessThan(n);
    expect(pc + 1 + view.getUint8(pc * 8 + 3)).toBeLessThan(n);
  }
  expect(view.getUint16((n - 1) * 8, true)).toBe(0x06); // it ends with a return
}
