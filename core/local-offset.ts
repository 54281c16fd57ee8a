// Owns this machine's offset from UTC at a moment, read the cheap way: the runtime's own local time
// starts its time zone database on first use (~10 ms of every process that asks), so the zone file
// (`TZ=Area/City`, else /etc/localtime) is read directly (TZif, RFC 8536: the last transition at or
// before the moment gives the offset). Anything it does not read with certainty (a POSIX `TZ` rule, a
// moment past the file's transitions, a file it cannot parse) is asked of the runtime instead.
import { readFileSync } from "node:fs";

/** Minutes east of UTC at `at`. */
export function localOffsetMinutes(at: Date): number {
  const fromFile = zoneFileOffset(at.getTime() / 1000);
  return fromFile ?? -at.getTimezoneOffset();
}

function zoneFile(): string | undefined {
  const tz = process.env.TZ;
  if (tz === undefined || tz === "") return "/etc/localtime";
  // A zone name (Area/City, UTC); a POSIX rule ("EST5EDT,M3.2.0,M11.1.0") or a `:` form is the
  // runtime's to read (as it reads them, so the two never disagree).
  if (!/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(tz)) return undefined;
  return `/usr/share/zoneinfo/${tz}`;
}

/** The offset the zone file gives for `seconds` since the epoch; undefined when it cannot say for sure. */
function zoneFileOffset(seconds: number): number | undefined {
  const file = zoneFile();
  if (file === undefined) return undefined;
  let b: Buffer;
  try {
    b = readFileSync(file);
  } catch {
    // no zone file: the C library's default is UTC, unless TZ named a zone it could not find
    return process.env.TZ ? undefined : 0;
  }
  try {
    return readTzif(b, seconds);
  } catch {
    return undefined;
  }
}

/** RFC 8536: the version 2+ (64-bit) block when there is one, else the version 1 block. */
function readTzif(b: Buffer, seconds: number): number | undefined {
  if (b.toString("latin1", 0, 4) !== "TZif") return undefined;
  const counts = (at: number) => ({ isut: b.readUInt32BE(at + 20), isstd: b.readUInt32BE(at + 24), leap: b.readUInt32BE(at + 28), time: b.readUInt32BE(at + 32), type: b.readUInt32BE(at + 36), char: b.readUInt32BE(at + 40) });
  const v1 = counts(0);
  let at = 0;
  let timeSize = 4;
  if (b[4] !== 0) {
    // skip the version 1 data block to the version 2 header
    at = 44 + v1.time * 4 + v1.time + v1.type * 6 + v1.char + v1.leap * 8 + v1.isstd + v1.isut;
    timeSize = 8;
    if (b.toString("latin1", at, at + 4) !== "TZif") return undefined;
  }
  const c = counts(at);
  const times = at + 44;
  const indexes = times + c.time * timeSize;
  const types = indexes + c.time;
  // Whole minutes, as the runtime gives them (a local mean time of 9:20:21 is +560).
  const offsetOf = (type: number) => Math.trunc(b.readInt32BE(types + type * 6) / 60);
  if (c.type === 0) return undefined;
  if (c.time === 0) return offsetOf(0);
  const timeAt = (i: number) => (timeSize === 8 ? Number(b.readBigInt64BE(times + i * 8)) : b.readInt32BE(times + i * 4));
  // Past the last transition the file's footer rule applies: a fixed offset (no `,` rule of changes to
  // come) is the last type's; a rule with summer time is the runtime's to read.
  if (seconds >= timeAt(c.time - 1)) {
    const footer = b.toString("latin1").split("\n").at(-2) ?? ",";
    return footer.includes(",") ? undefined : offsetOf(b[indexes + c.time - 1]!);
  }
  if (seconds < timeAt(0)) return offsetOf(0);
  let lo = 0;
  let hi = c.time - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (timeAt(mid) <= seconds) lo = mid;
    else hi = mid - 1;
  }
  return offsetOf(b[indexes + lo]!);
}
