// Owns `sandbox_allow_domains` patterns (SPEC §3.8): what a pattern may say (a host, `*.` its
// subdomains, an IPv4 address, each with an optional `:port`), the public suffixes a wildcard may not
// cover (the whole Public Suffix List, private suffixes included, from `tldts`), and whether a host and
// port match (a wildcard never across a public suffix below it). The config reads patterns with it, the
// proxy matches with it. Does not resolve names or judge addresses (the proxy does).

/** A host name label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The ports a pattern without one lets through. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** The Public Suffix List (core/public-suffix.ts): loaded before the first wildcard pattern is read
 *  or matched (loadPublicSuffixes), so a start without one never pays for it (~30 ms). */
let psl: typeof import("./public-suffix.ts") | undefined;

/** Loads the Public Suffix List when one of `patterns` needs it (a `*.` wildcard). */
export async function loadPublicSuffixes(patterns: readonly string[]): Promise<void> {
  if (patterns.some((p) => p.trim().startsWith("*."))) psl ??= await import("./public-suffix.ts");
}

function suffixes(): typeof import("./public-suffix.ts") {
  if (!psl) throw new Error("the Public Suffix List is not loaded: loadPublicSuffixes comes before reading or matching a wildcard pattern");
  return psl;
}

/** Whether `*.host` would cover every name under a public suffix (ICANN or private: `co.uk`,
 *  `s3.amazonaws.com`, `r2.dev`, `ngrok.app`): the pattern is refused when read. */
export function coversPublicSuffix(host: string): boolean {
  return !host.includes(".") || suffixes().isPublicSuffix(host);
}

export interface HostPattern {
  /** The host, lower case, without `*.` */
  readonly host: string;
  /** `*.host`: any subdomain of it (not the host itself). */
  readonly wildcard: boolean;
  /** The one port allowed; undefined: 80 and 443. */
  readonly port?: number;
}

/**
 * Reads one pattern; returns it or a sentence saying what is wrong with it (the caller names where the
 * pattern came from).
 */
export function parseHostPattern(raw: string, checkSuffix = true): HostPattern | string {
  const p = raw.trim().toLowerCase();
  const m = /^(.*?)(?::(\d{1,5}))?$/.exec(p)!;
  const [spec, portText] = [m[1]!, m[2]];
  const port = portText === undefined ? undefined : Number(portText);
  const notHost = "is not a host name: give a host (registry.npmjs.org), its subdomains (*.github.com) or an IPv4 address, optionally with a port (example.com:8080), without scheme or path";
  if (port !== undefined && (port < 1 || port > 65535)) return `is not a host name: its port ${portText} is not in 1-65535`;
  const wildcard = spec.startsWith("*.");
  const host = wildcard ? spec.slice(2) : spec;
  const labels = host.split(".");
  const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(host) && labels.every((n) => Number(n) <= 255);
  const name = host.length <= 253 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!);
  if (!(ipv4 && !wildcard) && !name) return notHost;
  if (wildcard && checkSuffix && coversPublicSuffix(host)) {
    return `*.${host} covers a public suffix, under which anyone can register a name: name the hosts (or *.their-domain.${host})`;
  }
  return { host, wildcard, ...(port !== undefined ? { port } : {}) };
}

/** The pattern as written back (lower case, port kept). */
export function formatHostPattern(p: HostPattern): string {
  return `${p.wildcard ? "*." : ""}${p.host}${p.port !== undefined ? `:${p.port}` : ""}`;
}

/** Whether `host` is named by the pattern (ports aside): `example.com` exactly, `*.example.com` any
 *  subdomain of one owner's (see ownerCrossed). */
function nameMatches(host: string, p: HostPattern): boolean {
  return p.wildcard ? host.endsWith(`.${p.host}`) : host === p.host;
}

/**
 * Whether a wildcard reaches `host` only across a public suffix: the host's suffix (private ones
 * included) lies below the pattern's domain, so its name belongs to whoever registered it there, not
 * to the owner the pattern meant. `*.amazonaws.com` names AWS's own hosts (`sts.amazonaws.com`) but
 * not `bucket.s3.amazonaws.com` nor `app.execute-api.us-east-1.amazonaws.com`. Judged by the list for
 * each host asked, so no table of such domains is kept.
 */
function ownerCrossed(host: string, p: HostPattern): boolean {
  return p.wildcard && suffixes().publicSuffixOf(host).endsWith(`.${p.host}`);
}

/** How a host and port fare against the patterns: allowed; the host not named; named only by a
 *  wildcard across a public suffix (its name is someone else's); or the port not allowed. */
export function matchHost(host: string, port: number, patterns: readonly HostPattern[]): "allowed" | "host" | "suffix" | "port" {
  const h = host.toLowerCase().replace(/\.$/, "");
  const named = patterns.filter((p) => nameMatches(h, p));
  if (named.length === 0) return "host";
  const owned = named.filter((p) => !ownerCrossed(h, p));
  if (owned.length === 0) return "suffix";
  return owned.some((p) => (p.port === undefined ? DEFAULT_PORTS.includes(port) : p.port === port)) ? "allowed" : "port";
}

/** The public suffix a wildcard pattern would cross to reach `host` (for the refusal's text). */
export function crossedSuffix(host: string): string {
  return suffixes().publicSuffixOf(host.toLowerCase().replace(/\.$/, ""));
}
