// Owns counting newlines in a buffer 16 bytes at a time: a WebAssembly SIMD loop (its text below, its
// bytes assembled here) over a buffer that lives in the module's memory, so files are read straight into
// it. Where WebAssembly SIMD is missing, the same API counts with a string search. Does not read files.

/**
 * The module, as WebAssembly text:
 *
 *   (memory (export "memory") PAGES PAGES)
 *   (func (export "count") (param $p i32) (param $n i32) (result i32)   ;; newlines in [p, p + n & ~15)
 *     (local $end i32) (local $acc i32)
 *     (local.set $end (i32.add (local.get $p) (i32.and (local.get $n) (i32.const -16))))
 *     (block (loop
 *       (br_if 1 (i32.ge_u (local.get $p) (local.get $end)))
 *       (local.set $acc (i32.add (local.get $acc)
 *         (i32.popcnt (i8x16.bitmask (i8x16.eq (v128.load (local.get $p)) (v128.const i8x16 10 …))))))
 *       (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *       (br 0)))
 *     (local.get $acc))
 */
function moduleBytes(pages: number): Uint8Array<ArrayBuffer> {
  const section = (id: number, bytes: number[]) => [id, ...uleb(bytes.length), ...bytes];
  const name = (s: string) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];
  const code = [
    0x01, 0x02, 0x7f, // two i32 locals: $end (2), $acc (3)
    0x20, 0x00, 0x20, 0x01, 0x41, 0x70, 0x71, 0x6a, 0x21, 0x02, // $end = $p + ($n & -16)
    0x02, 0x40, 0x03, 0x40, // block, loop
    0x20, 0x00, 0x20, 0x02, 0x4f, 0x0d, 0x01, // br_if 1 ($p >= $end)
    0x20, 0x03, 0x20, 0x00, 0xfd, 0x00, 0x00, 0x00, // $acc, v128.load $p
    0xfd, 0x0c, ...new Array<number>(16).fill(0x0a), // v128.const: sixteen newlines
    0xfd, 0x23, 0xfd, 0x64, 0x69, 0x6a, 0x21, 0x03, // i8x16.eq, i8x16.bitmask, i32.popcnt, add to $acc
    0x20, 0x00, 0x41, 0x10, 0x6a, 0x21, 0x00, 0x0c, 0x00, // $p += 16, br 0
    0x0b, 0x0b, 0x20, 0x03, 0x0b, // end loop, end block, $acc, end
  ];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]), // (i32, i32) -> i32
    ...section(3, [0x01, 0x00]),
    ...section(5, [0x01, 0x01, ...uleb(pages), ...uleb(pages)]),
    ...section(7, [0x02, ...name("memory"), 0x02, 0x00, ...name("count"), 0x00, 0x00]),
    ...section(10, [0x01, ...uleb(code.length), ...code]),
  ]);
}

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

const PAGE = 65536;

export interface NewlineCounter {
  /** Read into this; `count(n)` counts its first n bytes (and may overwrite the 16 after them). */
  readonly buf: Buffer;
  /** Whether the WebAssembly loop counts (else the string search). */
  readonly simd: boolean;
  count(n: number): number;
}

/** A counter whose buffer holds at least `bytes`; `simd: false` forces the string search. */
export function newlineCounter(bytes: number, simd = true): NewlineCounter {
  const pages = Math.ceil((bytes + 16) / PAGE);
  if (simd && typeof WebAssembly === "object") {
    try {
      const wasm = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes(pages))).exports as { memory: WebAssembly.Memory; count: (p: number, n: number) => number };
      // The memory never grows, so the views stay valid; its last 16 bytes lie beyond `buf`, so the bytes
      // after any count can be zeroed and the loop run to the next multiple of 16 (a zero is no newline).
      const whole = Buffer.from(wasm.memory.buffer);
      const buf = whole.subarray(0, pages * PAGE - 16);
      return {
        buf,
        simd: true,
        count(n) {
          whole.fill(0, n, n + 16);
          return wasm.count(0, n + 15);
        },
      };
    } catch {
      // no SIMD in this runtime: the string search below
    }
  }
  const buf = Buffer.allocUnsafe(pages * PAGE);
  return {
    buf,
    simd: false,
    count(n) {
      // latin1 keeps one char per byte, and string search beats a byte loop here.
      const s = buf.toString("latin1", 0, n);
      let lines = 0;
      for (let p = s.indexOf("\n"); p >= 0; p = s.indexOf("\n", p + 1)) lines++;
      return lines;
    },
  };
}
