// Owns the seccomp filter of `sandbox_network = true`: a confined command that shares the host's network
// namespace shares its abstract unix sockets too (an X server's `@/tmp/.X11-unix/X0`, a D-Bus bus), which
// no mount can hide, and several of them run anything outside the sandbox. So under that setting a
// command cannot make a unix socket: socket(AF_UNIX) and io_uring (whose SOCKET operation seccomp does not
// see) fail with EPERM; socketpair() still works, so pipes between its own processes do. The filter is
// classic BPF as bwrap's `--seccomp FD` takes it (struct sock_filter, little-endian); it knows the
// x86-64 (and x32 and i386 compat) and arm64 (and arm compat) calls, and refuses every call of any other
// architecture. Does not build the bwrap arguments (sandbox.ts).
import { arch } from "node:process";

/** seccomp_data: nr at 0, arch at 4, args[0] (its low 32 bits, little-endian) at 16. */
const NR = 0;
const ARCH = 4;
const ARG0 = 16;

const AF_UNIX = 1;
/** socketcall(2)'s call number for socket(). */
const SYS_SOCKET = 1;
const EPERM = 1;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | EPERM;

/** Per audit architecture: the socket() numbers, socketcall()'s if it has one, io_uring_setup()'s. */
const ARCHES: { audit: number; socket: number[]; socketcall?: number; ioUringSetup: number[] }[] = [
  // x86-64, and x32 (the same audit arch, numbers with bit 30 set)
  { audit: 0xc000003e, socket: [41, 0x40000000 + 41], ioUringSetup: [425, 0x40000000 + 425] },
  { audit: 0x40000003, socket: [359], socketcall: 102, ioUringSetup: [425] }, // i386
  { audit: 0xc00000b7, socket: [198], ioUringSetup: [425] }, // arm64
  { audit: 0x40000028, socket: [281], ioUringSetup: [425] }, // arm (EABI)
];

/** The hosts the filter is made for (process.arch); elsewhere the setting is refused. */
export const SECCOMP_HOSTS = ["x64", "arm64"];

export function seccompSupported(hostArch: string = arch): boolean {
  return SECCOMP_HOSTS.includes(hostArch);
}

type Insn = { code: number; k: number; jt?: string; jf?: string } | { label: string };

const ld = (offset: number): Insn => ({ code: 0x20, k: offset }); // BPF_LD | BPF_W | BPF_ABS
const jeq = (k: number, jt: string, jf = "next"): Insn => ({ code: 0x15, k, jt, jf }); // BPF_JMP | BPF_JEQ | BPF_K
const ret = (k: number): Insn => ({ code: 0x06, k }); // BPF_RET | BPF_K
const label = (name: string): Insn => ({ label: name });

/** The filter program, 8 bytes per instruction. */
export function unixSocketFilter(): Uint8Array {
  const prog: Insn[] = [ld(ARCH)];
  ARCHES.forEach((a, i) => prog.push(jeq(a.audit, `arch${i}`)));
  prog.push(ret(RET_EPERM)); // an architecture not listed: nothing runs
  ARCHES.forEach((a, i) => {
    prog.push(label(`arch${i}`), ld(NR));
    for (const nr of a.socket) prog.push(jeq(nr, "family"));
    if (a.socketcall !== undefined) prog.push(jeq(a.socketcall, "socketcall"));
    for (const nr of a.ioUringSetup) prog.push(jeq(nr, "deny"));
    prog.push(ret(RET_ALLOW));
  });
  prog.push(label("family"), ld(ARG0), jeq(AF_UNIX, "deny"), ret(RET_ALLOW));
  // socketcall's family is behind a pointer seccomp cannot read: its socket() is refused whatever the family.
  prog.push(label("socketcall"), ld(ARG0), jeq(SYS_SOCKET, "deny"), ret(RET_ALLOW));
  prog.push(label("deny"), ret(RET_EPERM));
  return assemble(prog);
}

function assemble(prog: Insn[]): Uint8Array {
  const at = new Map<string, number>();
  const insns: Exclude<Insn, { label: string }>[] = [];
  for (const i of prog) {
    if ("label" in i) at.set(i.label, insns.length);
    else insns.push(i);
  }
  const out = new Uint8Array(insns.length * 8);
  const view = new DataView(out.buffer);
  insns.forEach((insn, pc) => {
    const offset = (name: string | undefined): number => {
      if (name === undefined || name === "next") return 0;
      const target = at.get(name);
      if (target === undefined || target <= pc || target - pc - 1 > 255) throw new Error(`seccomp filter: bad jump to ${name}`);
      return target - pc - 1;
    };
    view.setUint16(pc * 8, insn.code, true);
    view.setUint8(pc * 8 + 2, offset(insn.jt));
    view.setUint8(pc * 8 + 3, offset(insn.jf));
    view.setUint32(pc * 8 + 4, insn.k >>> 0, true);
  });
  return out;
}
