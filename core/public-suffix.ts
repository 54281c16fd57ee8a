// Owns the Public Suffix List lookup (`tldts`, its ICANN and private sections): whether a domain is a
// suffix under which anyone can register a name. Loaded only when a `*.` allow pattern is read
// (core/host-patterns.ts loads it), so a start without one never pays for it.
import { getPublicSuffix } from "tldts";

export function isPublicSuffix(host: string): boolean {
  return getPublicSuffix(host, { allowPrivateDomains: true }) === host;
}
