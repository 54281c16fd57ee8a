// Owns the Public Suffix List lookup (`tldts`, its ICANN and private sections): whether a domain is a
// suffix under which anyone can register a name. Loaded only when a `*.` allow pattern is read
// (core/host-patterns.ts loads it), so a start without one never pays for it.
import { getPublicSuffix } from "tldts";

export function isPublicSuffix(host: string): boolean {
  return publicSuffixOf(host) === host;
}

/** The longest public suffix `host` ends with (`s3.amazonaws.com` for `x.s3.amazonaws.com`, `com`
 *  for `api.github.com`); a host the list does not know ends with its last label. */
export function publicSuffixOf(host: string): string {
  return getPublicSuffix(host, { allowPrivateDomains: true }) ?? host.slice(host.lastIndexOf(".") + 1);
}
