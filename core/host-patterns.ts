// Owns `sandbox_allow_domains` patterns (SPEC §3.8): what a pattern may say (a host, `*.` its
// subdomains, an IPv4 address, each with an optional `:port`), the public suffixes a wildcard may not
// cover, and whether a host and port match. A leaf: the config reads patterns with it, the proxy matches
// with it. Does not resolve names or judge addresses (the proxy does).

/** A host name label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The ports a pattern without one lets through. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/**
 * Suffixes under which anyone can register a name, so `*.SUFFIX` would let through hosts of every
 * owner. A single label (`*.com`, `*.dev`) is always refused; these are the common two-label public
 * suffixes and shared hosting domains. Built in and short, not the whole Public Suffix List.
 */
export const PUBLIC_SUFFIXES: ReadonlySet<string> = new Set([
  "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "ltd.uk", "plc.uk", "net.uk",
  "com.au", "net.au", "org.au", "edu.au", "gov.au", "co.nz", "org.nz", "net.nz",
  "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp", "co.kr", "or.kr", "com.cn", "net.cn", "org.cn",
  "com.br", "net.br", "org.br", "com.mx", "com.ar", "co.in", "net.in", "org.in", "co.za", "org.za",
  "com.tr", "com.tw", "com.hk", "com.sg", "co.id", "co.il", "com.pl", "com.ua", "co.th",
  "github.io", "githubusercontent.com", "gitlab.io", "herokuapp.com", "vercel.app", "netlify.app",
  "pages.dev", "workers.dev", "web.app", "firebaseapp.com", "appspot.com", "cloudfront.net",
  "amazonaws.com", "azurewebsites.net", "blogspot.com", "fly.dev", "onrender.com", "ngrok.io", "ngrok-free.app",
]);

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
export function parseHostPattern(raw: string): HostPattern | string {
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
  if (wildcard && (labels.length === 1 || PUBLIC_SUFFIXES.has(host))) {
    return `*.${host} covers a public suffix, under which anyone can register a name: name the hosts (or *.their-domain.${host})`;
  }
  return { host, wildcard, ...(port !== undefined ? { port } : {}) };
}

/** The pattern as written back (lower case, port kept). */
export function formatHostPattern(p: HostPattern): string {
  return `${p.wildcard ? "*." : ""}${p.host}${p.port !== undefined ? `:${p.port}` : ""}`;
}

/** Whether `host` is named by the pattern (ports aside): `example.com` exactly, `*.example.com` any subdomain. */
function nameMatches(host: string, p: HostPattern): boolean {
  return p.wildcard ? host.endsWith(`.${p.host}`) : host === p.host;
}

/** How a host and port fare against the patterns: allowed, the host not named, or the port not allowed. */
export function matchHost(host: string, port: number, patterns: readonly HostPattern[]): "allowed" | "host" | "port" {
  const h = host.toLowerCase().replace(/\.$/, "");
  const named = patterns.filter((p) => nameMatches(h, p));
  if (named.length === 0) return "host";
  return named.some((p) => (p.port === undefined ? DEFAULT_PORTS.includes(port) : p.port === port)) ? "allowed" : "port";
}
