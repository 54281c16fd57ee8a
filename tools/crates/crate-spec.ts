// Owns the `NAME[@RANGE]` argument: crate-name rules and the range dialect (cargo's commas accepted,
// a bare full version means exactly that version, as `cargo install NAME@VER` reads it).
import semver from "semver";
import { CrateError } from "./errors.ts";

export interface CrateRequest {
  /** As typed; the registry's spelling may differ in case. */
  name: string;
  /** A node-semver range, when one was given. */
  range?: string;
  /** Set when the range pins one version (`1.2.3` or `=1.2.3`). */
  exact?: string;
}

/** crates.io's rule: ASCII letter first, then letters, digits, `-`, `_`; at most 64 characters. */
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export function isCrateName(name: string): boolean {
  return NAME.test(name);
}

export function parseCrateSpec(text: string): CrateRequest {
  const at = text.indexOf("@");
  const name = at < 0 ? text : text.slice(0, at);
  if (!isCrateName(name)) {
    throw new CrateError("usage", `invalid crate name ${JSON.stringify(name)} (letters, digits, - and _, starting with a letter)`);
  }
  if (at < 0) return { name };
  return { name, ...parseRange(text.slice(at + 1), text) };
}

/** Cargo writes `>=1.2, <1.5`; node-semver wants spaces. `latest` (as npm says it) is `*`: newest, lock ignored. */
export function parseRange(raw: string, whole = raw): { range: string; exact?: string } {
  const range = raw.trim() === "latest" ? "*" : raw.trim().replace(/\s*,\s*/g, " ");
  const exact = semver.valid(range.replace(/^=\s*/, "")) ?? undefined;
  if (range === "" || semver.validRange(range) === null) {
    throw new CrateError("usage", `invalid version range in ${JSON.stringify(whole)} (e.g. 1, ^1.2, ~0.4.3, >=1.0 <2, =1.2.3)`);
  }
  return exact ? { range, exact } : { range };
}
