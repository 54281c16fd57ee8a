// Owns Tendril's credentials file ($XDG_CONFIG_HOME/tendril/credentials.toml): reading it (mode 0600
// or refused, TOML syntax, known keys only, each error naming the file and the fix), writing it
// privately and atomically, removing a provider's entry, which key wins (environment > file) and where
// a stored key may go (only to the base URL stored with it).
// Does not prompt anyone (cli/modes/login.ts) or speak ACP (core/acp/auth.ts).
import { closeSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import type { ProviderName } from "./llm/provider-names.ts";
import { randomHex } from "./ids.ts";
import { log } from "./log.ts";
import { openPrivateFile } from "./private-file.ts";

/** The providers a key can be stored for (replay needs none). */
export const KEYED_PROVIDERS = ["anthropic", "openai"] as const;
export type KeyedProvider = (typeof KEYED_PROVIDERS)[number];

export interface StoredEndpoint {
  api_key: string;
  base_url?: string;
}
export type Credentials = Partial<Record<KeyedProvider, StoredEndpoint>>;

export class CredentialsError extends Error {
  override name = "CredentialsError";
}

export function credentialsPath(configDir: string): string {
  return join(configDir, "credentials.toml");
}

export function isKeyedProvider(name: string): name is KeyedProvider {
  return (KEYED_PROVIDERS as readonly string[]).includes(name);
}

function checkTable(path: string, table: Record<string, unknown>): Credentials {
  const out: Credentials = {};
  for (const [name, entry] of Object.entries(table)) {
    if (!isKeyedProvider(name)) throw new CredentialsError(`${path}: unknown key "${name}" (known tables: [anthropic], [openai]); remove it or run tendril agent logout`);
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) throw new CredentialsError(`${path}: "${name}" must be a table ([${name}]) with api_key = "…"`);
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) {
      if (k !== "api_key" && k !== "base_url") throw new CredentialsError(`${path}: unknown key "${name}.${k}" (known: api_key, base_url); remove that line`);
    }
    if (typeof e.api_key !== "string") throw new CredentialsError(`${path}: [${name}] needs api_key = "…" (a string)`);
    if (e.base_url !== undefined && typeof e.base_url !== "string") throw new CredentialsError(`${path}: ${name}.base_url must be a string`);
    out[name] = e.base_url === undefined ? { api_key: e.api_key } : { api_key: e.api_key, base_url: e.base_url };
  }
  return out;
}

/**
 * The stored credentials; a missing file is empty. A file group or others may read is refused (a
 * key there may already have leaked, and silently tightening it would hide that), as is one that is
 * not TOML or holds keys this version does not know.
 */
export function readCredentials(path: string): Credentials {
  let mode: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new CredentialsError(`${path} is not a regular file; remove it and run tendril agent login`);
    mode = st.mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    if (err instanceof CredentialsError) throw err;
    throw new CredentialsError(`${path}: ${(err as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new CredentialsError(`${path} can be read by group or others (mode ${mode.toString(8).padStart(4, "0")}); run chmod 600 ${path} (and replace the key if others could have read it)`);
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new CredentialsError(`${path}: ${(err as Error).message}`);
  }
  let table: Record<string, unknown>;
  try {
    table = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    const e = err as { message?: string; line?: number };
    const what = (e.message ?? String(err)).split("\n")[0];
    throw new CredentialsError(`${path}${e.line ? `:${e.line}` : ""}: ${what}; fix line ${e.line ?? "?"} or remove the file and run tendril agent login`);
  }
  return checkTable(path, table);
}

/** Replaces the file with `creds` (0600, written to a private temp file then renamed); empty → removed. */
export function writeCredentials(path: string, creds: Credentials): void {
  const names = KEYED_PROVIDERS.filter((p) => creds[p] !== undefined);
  if (names.length === 0) {
    rmSync(path, { force: true });
    return;
  }
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  const ordered: Record<string, StoredEndpoint> = {};
  for (const p of names) ordered[p] = creds[p]!;
  const text = `# Written by tendril agent login. Keep it private (mode 0600).\n${stringifyToml(ordered)}\n`;
  // A fresh name, made only if nothing (a planted symlink included) is there already.
  const tmp = `${path}.${process.pid}.${randomHex(8)}.tmp`;
  const fd = openPrivateFile(tmp, "new");
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw err;
  }
}

/** Stores `entry` for `provider`, keeping the other providers' entries. */
export function storeKey(path: string, provider: KeyedProvider, entry: StoredEndpoint): void {
  const creds = readCredentials(path);
  creds[provider] = entry;
  writeCredentials(path, creds);
}

/** Removes `provider`'s entry (every entry when undefined); true when something was removed. */
export function removeKey(path: string, provider?: KeyedProvider): boolean {
  const creds = readCredentials(path);
  const had = provider === undefined ? KEYED_PROVIDERS.some((p) => creds[p]) : creds[provider] !== undefined;
  if (provider === undefined) writeCredentials(path, {});
  else {
    delete creds[provider];
    writeCredentials(path, creds);
  }
  return had;
}

/** Where a provider's endpoint comes from: the environment's values win over the file's, field by field. */
export interface Endpoint {
  apiKey?: string;
  baseUrl?: string;
  /** Where the key came from; "none" when there is none. */
  keyFrom: "environment" | "file" | "none";
}

/**
 * The endpoint for `provider`: the environment's key (with the environment's base URL, if any), else
 * the credentials file's key with the base URL stored beside it, and nothing else: a base URL from the
 * environment that differs is refused, since it would carry the stored key to a host the user never
 * stored it for. Throws CredentialsError for that and for a bad file that had to be read.
 */
export function resolveEndpoint(provider: ProviderName, env: { apiKey?: string; baseUrl?: string }, path: string): Endpoint {
  if (provider === "replay") return { keyFrom: "none" };
  if (env.apiKey) return { apiKey: env.apiKey, ...(env.baseUrl ? { baseUrl: env.baseUrl } : {}), keyFrom: "environment" };
  const stored = readCredentials(path)[provider];
  if (!stored?.api_key) return { ...(env.baseUrl ? { baseUrl: env.baseUrl } : {}), keyFrom: "none" };
  if (env.baseUrl && env.baseUrl !== stored.base_url) {
    const prefix = provider.toUpperCase();
    throw new CredentialsError(
      `${prefix}_BASE_URL is ${env.baseUrl}, but the ${provider} key comes from ${path}, where it is stored for ${stored.base_url ?? "the provider's own endpoint"}; a stored key goes only there. Set ${prefix}_API_KEY too to use ${env.baseUrl}, unset ${prefix}_BASE_URL, or run tendril agent login --base-url ${env.baseUrl}`,
    );
  }
  return { apiKey: stored.api_key, ...(stored.base_url ? { baseUrl: stored.base_url } : {}), keyFrom: "file" };
}

/** A warning for a base URL that sends the key in the clear: plain http to a host other than this machine. */
export function cleartextWarning(baseUrl: string | undefined): string | undefined {
  if (!baseUrl) return undefined;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return undefined; // the SDK reports a malformed URL itself
  }
  if (url.protocol !== "http:") return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "::1") return undefined;
  return `the base URL ${baseUrl} is plain http to another machine: the API key and every prompt cross the network unencrypted; use https`;
}

/** A provider can be called: replay always, else with a key or an explicit base URL (local servers take none). */
export function endpointUsable(provider: ProviderName, ep: Endpoint): boolean {
  return provider === "replay" || ep.apiKey !== undefined || ep.baseUrl !== undefined;
}

/** The first provider the file holds a key for (for the default provider); undefined when none or unreadable. */
export function storedProvider(path: string): KeyedProvider | undefined {
  try {
    const creds = readCredentials(path);
    return KEYED_PROVIDERS.find((p) => creds[p]?.api_key);
  } catch {
    return undefined; // reported where the key is needed, naming the file and the fix
  }
}

/**
 * The key source of an agent running `provider`: its endpoint per use, and what its authentication
 * needs (core/acp/auth.ts's AuthHost): whether a usable key exists now, and forgetting the stored one.
 */
export function keySource(provider: ProviderName, env: { apiKey?: string; baseUrl?: string }, path: string, warn: (message: string) => void = (m) => log.warn(m)) {
  const warned = new Set<string>();
  const endpoint = (): Endpoint => {
    const ep = resolveEndpoint(provider, env, path);
    const warning = cleartextWarning(ep.baseUrl);
    if (warning && !warned.has(ep.baseUrl!)) {
      warned.add(ep.baseUrl!);
      warn(warning);
    }
    return ep;
  };
  return {
    endpoint,
    auth: {
      provider,
      ...(provider === "replay" ? {} : { keyVar: provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY" }),
      usable: () => endpointUsable(provider, endpoint()),
      forget: () => isKeyedProvider(provider) && removeKey(path, provider),
    },
  };
}
