// Owns the seccomp filter of every confined command (SPEC §3.8), classic BPF as bwrap's `--seccomp FD`
// takes it (struct sock_filter, little-endian). The baseline refuses what reaches past the sandbox or
// into the kernel's less-walked paths: new user namespaces (clone/unshare with CLONE_NEWUSER, setns),
// the keyring (add_key, request_key, keyctl), io_uring, bpf, perf_event_open, userfaultfd and ptrace;
// clone3, whose flags seccomp cannot read, answers ENOSYS so libc falls back to clone. Under
// `sandbox_network = true` it also refuses making a unix socket: the command shares the host's network
// namespace and so its abstract unix sockets (an X server's, a D-Bus bus), which no mount hides and
// several of which run anything outside; socketpair() still works. It knows x86-64 (and i386 compat)
// and arm64 (and arm compat); x32 calls and every other architecture are refused whole. Does not build
// the bwrap arguments (sandbox-args.ts).
import { arch } from "node:process";

/** seccomp_data: nr at 0, arch at 4, args[0] (its low 32 bits, little-endian) at 16. */
const NR = 0;
const ARCH = 4;
const ARG0 = 16;

const AF_UNIX = 1;
/** socketcall(2)'s call number for socket(). */
const SYS_SOCKET = 1;
const CLONE_NEWUSER = 0x10000000;
/** x32 calls are x86-64's audit arch with this bit set in the number. */
const X32_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | EPERM;
const RET_ENOSYS = 0x00050000 | ENOSYS;

interface ArchCalls {
  audit: number;
  /** Refused outright: setns, add_key, request_key, keyctl, io_uring_setup, bpf, perf_event_open, userfaultfd, ptrace. */
  refused: number[];
  /** Refused when their first argument asks for a new user namespace: clone, unshare. */
  clone: number[];
  clone3: number;
  socket: number;
  socketcall?: number;
  /** x86-64: refuse x32 numbers. */
  x32?: true;
}

// Numbers from each architecture's syscall table, in the order of ArchCalls.refused.
const ARCHES: ArchCalls[] = [
  { audit: 0xc000003e, refused: [308, 248, 249, 250, 425, 321, 298, 323, 101], clone: [56, 272], clone3: 435, socket: 41, x32: true }, // x86-64
  { audit: 0x40000003, refused: [346, 286, 287, 288, 425, 357, 336, 374, 26], clone: [120, 310], clone3: 435, socket: 359, socketcall: 102 }, // i386
  { audit: 0xc00000b7, refused: [268, 217, 218, 219, 425, 280, 241, 282, 117], clone: [220, 97], clone3: 435, socket: 198 }, // arm64
  { audit: 0x40000028, refused: [375, 309, 310, 311, 425, 386, 364, 388, 26], clone: [120, 337], clone3: 435, socket: 281 }, // arm (EABI)
];

/** The hosts the filter is made for (process.arch); elsewhere a confined setting is refused. */
export const SECCOMP_HOSTS = ["x64", "arm64"];

export function seccompSupported(hostArch: string = arch): boolean {
  return SECCOMP_HOSTS.includes(hostArch);
}

type Insn = { code: number; k: number; jt?: string; jf?: string } | { label: string };

const ld = (offset: number): Insn => ({ code: 0x20, k: offset }); // BPF_LD | BPF_W | BPF_ABS
const jeq = (k: number, jt: string, jf = "next"): Insn => ({ code: 0x15, k, jt, jf }); // BPF_JMP | BPF_JEQ | BPF_K
const jge = (k: number, jt: string, jf = "next"): Insn => ({ code: 0x35, k, jt, jf }); // BPF_JMP | BPF_JGE | BPF_K
const jset = (k: number, jt: string, jf = "next"): Insn => ({ code: 0x45, k, jt, jf }); // BPF_JMP | BPF_JSET | BPF_K
const ret = (k: number): Insn => ({ code: 0x06, k }); // BPF_RET | BPF_K
const label = (name: string): Insn => ({ label: name });

/** The filter program, 8 bytes per instruction; `unixSockets`: also refuse making a unix socket. */
export function sandboxFilter(opts: { unixSockets: boolean }): Uint8Array {
  const prog: Insn[] = [ld(ARCH)];
  ARCHES.forEach((a, i) => prog.push(jeq(a.audit, `arch${i}`)));
  prog.push(ret(RET_EPERM)); // an architecture not listed: nothing runs
  ARCHES.forEach((a, i) => {
    prog.push(label(`arch${i}`), ld(NR));
    if (a.x32) prog.push(jge(X32_BIT, "deny"));
    for (const nr of a.refused) prog.push(jeq(nr, "deny"));
    for (const nr of a.clone) prog.push(jeq(nr, "newuser"));
    prog.push(jeq(a.clone3, "nosys"));
    if (opts.unixSockets) {
      prog.push(jeq(a.socket, "family"));
      if (a.socketcall !== undefined) prog.push(jeq(a.socketcall, "socketcall"));
    }
    prog.push(ret(RET_ALLOW));
  });
  prog.push(label("newuser"), ld(ARG0), jset(CLONE_NEWUSER, "deny"), ret(RET_ALLOW));
  if (opts.unixSockets) {
    prog.push(label("family"), ld(ARG0), jeq(AF_UNIX, "deny"), ret(RET_ALLOW));
    // socketcall's family is behind a pointer seccomp cannot read: its socket() is refused whatever the family.
    prog.push(label("socketcall"), ld(ARG0), jeq(SYS_SOCKET, "deny"), ret(RET_ALLOW));
  }
  prog.push(label("nosys"), ret(RET_ENOSYS));
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
