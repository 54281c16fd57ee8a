// The offset from UTC read from the zone file agrees with the runtime's own local time, for zones with
// and without summer time, fractional offsets, and moments before, inside and past the file's
// transitions (where it defers to the runtime).
import { afterEach, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { localOffsetMinutes } from "./local-offset.ts";

const TZ = process.env.TZ;
afterEach(() => {
  if (TZ === undefined) delete process.env.TZ;
  else process.env.TZ = TZ;
});

test.skipIf(!existsSync("/usr/share/zoneinfo/Asia/Tokyo"))("the zone file's offset is the runtime's, everywhere and at any moment", () => {
  const zones = ["Asia/Tokyo", "America/New_York", "Asia/Kolkata", "Europe/London", "Australia/Adelaide", "UTC", "Etc/GMT+5", "Pacific/Chatham", "America/St_Johns", ":Europe/Paris", "EST5EDT", "No/Such_Zone"];
  const moments = ["2026-12-03T23:30:00Z", "2026-07-01T12:00:00Z", "1990-03-01T00:00:00Z", "1900-01-01T00:00:00Z", "2040-07-01T00:00:00Z"].map((m) => new Date(m));
  const off: string[] = [];
  for (const z of zones) {
    process.env.TZ = z;
    for (const m of moments) if (localOffsetMinutes(m) !== -m.getTimezoneOffset()) off.push(`${z} ${m.toISOString()}: ${localOffsetMinutes(m)} vs ${-m.getTimezoneOffset()}`);
  }
  expect(off).toEqual([]);
});
