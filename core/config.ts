// Owns the resolved configuration: flags > environment > TOML config file > defaults, plus XDG paths.
// Does not touch the process: cli/ passes flags, env and a file reader in; errors name the bad value.
import { parse as parseToml } from "smol-toml";
import { join } from "node:path";
import { type Limits, type LimitName, LIMIT_SPECS, loadLimits, parseLimit } from "./limits.ts";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "./log.ts";
import { type PermissionRule, parseRules as parseRuleTables, RuleError } from "./policy/rules.ts";
import { describeIssue, lazySchema, type SchemaOf } from "./zod-issue.ts";
import type { z } from "zod";
import { type McpServerEntry, mcpEntrySchema } from "./mcp-entry.ts";
import { loadProfile, type Profile, ProfileError, profilePath } from "./profile.ts";
import { credentialsPath, storedProvider } from "./credentials.ts";
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from "./policy/modes.ts";
import { isSandboxMode, SANDBOX_MODES, type SandboxMode } from "./sandbox-modes.ts";
import { formatHostPattern, loadPublicSuffixes, parseHostPattern } from "./host-patterns.ts";
import { isOpenAiApi, isProviderName, OPENAI_APIS, type OpenAiApi, PROVIDERS, type ProviderName } from "./llm/provider-names.ts";
import type { Price } from "./llm/prices.ts";

export type { McpServerEntry };

export type { PermissionRule };


/** The sandbox for shell commands (SPEC §3.8; tools/dev/sandbox.ts enforces it). */
export interface SandboxConfig {
  mode: SandboxMode;
  /** `sandbox_network = true`: confined commands keep the host's network. */
  network: boolean;
  /** `sandbox_hide`: more paths confined commands cannot read, absolute (`~/` expanded). */
  hide: string[];
  /** `sandbox_allow_domains`: host patterns (`example.com`, `*.example.com`, lower case) confined
   *  commands reach through the agent's proxy; empty = none. */
  allowDomains: string[];
}


export interface Paths {
  configFile: string;
  configDir: string;
  stateDir: string;
  cacheDir: string;
}

export interface Config {
  provider: ProviderName;
  model: string;
  /** Models a client may switch to; empty = whatever the provider lists. */
  models: string[];
  anthropic: { apiKey?: string; baseUrl?: string };
  openai: { apiKey?: string; baseUrl?: string };
  /** TENDRIL_OPENAI_API / `openai_api`; absent = Responses on OpenAI's own endpoint, Chat elsewhere. */
  openaiApi?: OpenAiApi;
  /** `prompt_cache_key`: true sends OpenAI's prompt_cache_key to any base URL, false to none;
   *  absent = to OpenAI's own endpoint only. */
  promptCacheKey?: boolean;
  maxTokens: number;
  contextWindow: number;
  systemPrompt?: string;
  /** Servers allowed to run lifecycle hooks: "*" = all, [] = none. */
  hookServers: "*" | string[];
  /** Whether sessions get the default `dev` tools (a profile may leave them out). */
  dev: boolean;
  /** The profile file in force, if any. */
  profile?: string;
  logLevel: LogLevel;
  mode: PermissionMode;
  rules: PermissionRule[];
  mcp: McpServerEntry[];
  sandbox: SandboxConfig;
  record?: string;
  replay?: string;
  /** Prompt caching (SPEC §3.9): `on` marks cache breakpoints, `1h` asks for the hour-long cache, `off` sends none. */
  promptCache: PromptCache;
  /** What the model reads of a long shell output (SPEC §7): `digest` (the default) or `raw` (as printed, the tail past the cap). */
  shellOutput: ShellOutput;
  /** `[prices."MODEL"]`: prices that add to or override the built-in table (core/llm/prices.ts). */
  prices: Record<string, Price>;
  limits: Limits;
  paths: Paths;
}

export const PROMPT_CACHE_SETTINGS = ["on", "off", "1h"] as const;
export const SHELL_OUTPUT_SETTINGS = ["digest", "raw"] as const;
export type ShellOutput = (typeof SHELL_OUTPUT_SETTINGS)[number];
export type PromptCache = (typeof PROMPT_CACHE_SETTINGS)[number];

export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ConfigFlags {
  config?: string;
  /** Where a relative `--profile PATH` is resolved (cli passes the process's cwd). */
  cwd?: string;
  provider?: string;
  model?: string;
  profile?: string;
  mode?: string;
  log?: string;
  sandbox?: string;
}

export const DEFAULT_MODELS: Record<ProviderName, string> = {
  anthropic: "claude-sonnet-5-5",
  openai: "gpt-5.5",
  replay: "replay",
};

type Env = Readonly<Record<string, string | undefined>>;
type FileTable = Record<string, unknown>;

export function resolvePaths(env: Env, configFlag?: string): Paths {
  const home = env.HOME || "/";
  const configDir = join(env.XDG_CONFIG_HOME || join(home, ".config"), "tendril");
  return {
    configDir,
    configFile: configFlag ?? join(configDir, "config.toml"),
    stateDir: join(env.XDG_STATE_HOME || join(home, ".local", "state"), "tendril"),
    cacheDir: join(env.XDG_CACHE_HOME || join(home, ".cache"), "tendril"),
  };
}

/** Reads a TOML file; a missing default file is an empty table, a missing explicit one is an error. */
export function parseConfigFile(path: string, text: string | undefined, explicit: boolean): FileTable {
  if (text === undefined) {
    if (explicit) throw new ConfigError(`config file not found: ${path}`);
    return {};
  }
  try {
    return parseToml(text) as FileTable;
  } catch (err) {
    throw new ConfigError(`${path}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
  }
}

function positiveInt(raw: string | number | undefined, what: string): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = typeof raw === "number" ? raw : Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new ConfigError(`${what} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Unset: the provider whose key the environment holds, else the first one credentials.toml holds, else openai. */
function pickProvider(raw: string | undefined, env: Env, stored: () => ProviderName | undefined): ProviderName {
  if (raw === undefined || raw === "") {
    if (env.ANTHROPIC_API_KEY) return "anthropic";
    return env.OPENAI_API_KEY || env.OPENAI_BASE_URL ? "openai" : (stored() ?? "openai");
  }
  if (isProviderName(raw)) return raw;
  throw new ConfigError(`provider must be one of ${PROVIDERS.join(", ")}, got ${JSON.stringify(raw)}`);
}

/** Every key config.toml may hold; anything else is refused, never silently ignored. */
const fileSchema = lazySchema((z) =>
  z.strictObject({
    provider: z.string().optional(),
    model: z.string().optional(),
    models: z.array(z.string().min(1)).optional(),
    max_tokens: z.number().optional(),
    context_window: z.number().optional(),
    mcp_hook_servers: z.string().optional(),
    mode: z.string().optional(),
    log: z.string().optional(),
    system_prompt: z.string().optional(),
    rules: z.unknown().optional(),
    mcp: z.array(mcpEntrySchema(z)).optional(),
    limits: z.record(z.string(), z.union([z.number(), z.string()])).optional(),
    sandbox: z.string().optional(),
    sandbox_network: z.boolean().optional(),
    sandbox_hide: z.array(z.string().min(1)).optional(),
    sandbox_allow_domains: z.array(z.string()).optional(),
    openai_api: z.string().optional(),
    prompt_cache_key: z.boolean().optional(),
    prompt_cache: z.string().optional(),
    shell_output: z.string().optional(),
    prices: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  }),
);
type ConfigFile = z.infer<SchemaOf<typeof fileSchema>>;

/** The keys config.toml may hold. */
export async function configFileKeys(): Promise<(keyof ConfigFile)[]> {
  return Object.keys((await fileSchema()).shape) as (keyof ConfigFile)[];
}

async function validateFile(table: FileTable, where: string): Promise<ConfigFile> {
  if (Object.keys(table).length === 0) return {}; // no file, or an empty one: nothing to check
  const r = (await fileSchema()).safeParse(table);
  if (!r.success) throw new ConfigError(describeIssue(r.error, where));
  return r.data;
}

/** `*` = every server, else a comma list of server names; unset or empty = none. */
function hookServers(raw: string | undefined): "*" | string[] {
  if (raw?.trim() === "*") return "*";
  return (raw ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
}

async function readProfile(flags: ConfigFlags, env: Env, paths: Paths, readFile: (path: string) => string | undefined): Promise<Profile | undefined> {
  const name = flags.profile ?? env.TENDRIL_PROFILE;
  if (name === undefined || name === "") return undefined;
  try {
    return await loadProfile(profilePath(name, paths.configDir, flags.cwd ?? "/"), readFile);
  } catch (err) {
    if (err instanceof ProfileError) throw new ConfigError(err.message);
    throw err;
  }
}

/** `[[rules]]` of a config or policy file, compiled; a bad rule is a ConfigError naming file and rule. */
export async function parseRules(raw: unknown, where: string): Promise<PermissionRule[]> {
  try {
    return await parseRuleTables(raw, where);
  } catch (err) {
    if (err instanceof RuleError) throw new ConfigError(err.message);
    throw err;
  }
}

function fileLimits(raw: ConfigFile["limits"], where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) {
    const name = k.toUpperCase() as LimitName;
    if (!(name in LIMIT_SPECS)) throw new ConfigError(`${where}: [limits] has an unknown limit ${k}`);
    out[`TENDRIL_${name}`] = String(v);
    parseLimit(name, String(v));
  }
  return out;
}

function pickOpenAiApi(raw: string, what: string): OpenAiApi {
  if (isOpenAiApi(raw)) return raw;
  throw new ConfigError(`${what} must be one of ${OPENAI_APIS.join(", ")}, got ${JSON.stringify(raw)}`);
}

function pickSandboxMode(raw: string): SandboxMode {
  if (isSandboxMode(raw)) return raw;
  throw new ConfigError(`sandbox must be one of ${SANDBOX_MODES.join(", ")}, got ${JSON.stringify(raw)}`);
}

function pickShellOutput(raw: string, what: string): ShellOutput {
  if ((SHELL_OUTPUT_SETTINGS as readonly string[]).includes(raw)) return raw as ShellOutput;
  throw new ConfigError(`${what} must be one of ${SHELL_OUTPUT_SETTINGS.join(", ")}, got ${JSON.stringify(raw)}`);
}

function pickPromptCache(raw: string, what: string): PromptCache {
  if ((PROMPT_CACHE_SETTINGS as readonly string[]).includes(raw)) return raw as PromptCache;
  throw new ConfigError(`${what} must be one of ${PROMPT_CACHE_SETTINGS.join(", ")}, got ${JSON.stringify(raw)}`);
}

const PRICE_KEYS = { input: "input", output: "output", cache_write: "cacheWrite", cache_read: "cacheRead", cache_write_1h: "cacheWrite1h" } as const;
const REQUIRED_PRICE_KEYS = ["input", "output", "cache_write", "cache_read"] as const;

/** `[prices."MODEL"]` tables → prices (USD per million tokens); a value that is not a non-negative number is refused, naming it. */
export function parsePrices(raw: Record<string, Record<string, unknown>> | undefined, where: string): Record<string, Price> {
  const out: Record<string, Price> = {};
  for (const [model, table] of Object.entries(raw ?? {})) {
    const name = `${where}: [prices.${JSON.stringify(model)}]`;
    const price: Partial<Price> = {};
    for (const [key, value] of Object.entries(table)) {
      if (!(key in PRICE_KEYS)) throw new ConfigError(`${name} has an unknown key ${key} (known: ${Object.keys(PRICE_KEYS).join(", ")})`);
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        throw new ConfigError(`${name} ${key} must be a non-negative number (USD per million tokens), got ${JSON.stringify(value)}`);
      }
      price[PRICE_KEYS[key as keyof typeof PRICE_KEYS]] = value;
    }
    const missing = REQUIRED_PRICE_KEYS.filter((k) => !(k in table));
    if (missing.length > 0) throw new ConfigError(`${name} needs ${missing.join(", ")} as well (USD per million tokens)`);
    out[model] = price as Price;
  }
  return out;
}

/**
 * `sandbox_allow_domains` entries, lower-cased: a host name (`registry.npmjs.org`, `localhost`), a
 * `*.` wildcard for its subdomains (`*.github.com`, never a public suffix), or an IPv4 address, each
 * with an optional `:port` (core/host-patterns.ts). Anything else is refused, naming the entry.
 */
export async function allowDomains(raw: readonly string[] | undefined, where: string): Promise<string[]> {
  await loadPublicSuffixes(raw ?? []);
  return (raw ?? []).map((entry) => {
    const p = parseHostPattern(entry);
    if (typeof p === "string") throw new ConfigError(`${where}: sandbox_allow_domains: ${JSON.stringify(entry)} ${p}`);
    return formatHostPattern(p);
  });
}

/** `~/x` against HOME; anything else must already be absolute. */
function hidePath(raw: string, home: string | undefined, where: string): string {
  if (raw === "~" || raw.startsWith("~/")) {
    if (!home) throw new ConfigError(`${where}: sandbox_hide: ${raw} needs HOME, which is not set`);
    return join(home, raw.slice(1));
  }
  if (!raw.startsWith("/")) throw new ConfigError(`${where}: sandbox_hide: ${JSON.stringify(raw)} must be an absolute path or start with ~/`);
  return raw;
}

/**
 * Resolves the whole configuration. `readFile` returns undefined for a missing file. Asynchronous
 * only because checking a file that exists loads the validator.
 */
export async function loadConfig(flags: ConfigFlags, env: Env, readFile: (path: string) => string | undefined): Promise<Config> {
  const paths = resolvePaths(env, flags.config ?? env.TENDRIL_CONFIG);
  const explicit = flags.config !== undefined || !!env.TENDRIL_CONFIG;
  const where = paths.configFile;
  const file = await validateFile(parseConfigFile(where, readFile(where), explicit), where);
  const profile = await readProfile(flags, env, paths, readFile);
  const stored = () => storedProvider(credentialsPath(paths.configDir));
  const provider = pickProvider(flags.provider ?? env.TENDRIL_PROVIDER ?? profile?.provider ?? file.provider, env, stored);
  const level = flags.log ?? env.TENDRIL_LOG ?? file.log ?? "warn";
  if (!isLogLevel(level)) throw new ConfigError(`log level must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(level)}`);
  const mode = flags.mode ?? env.TENDRIL_MODE ?? profile?.mode ?? file.mode ?? "ask";
  if (!isPermissionMode(mode)) {
    throw new ConfigError(`mode must be one of ${PERMISSION_MODES.join(", ")}, got ${JSON.stringify(mode)}`);
  }
  const limits = loadLimits({ ...fileLimits(file.limits, where), ...env });
  const sandbox: SandboxConfig = {
    mode: pickSandboxMode(flags.sandbox ?? env.TENDRIL_SANDBOX ?? profile?.sandbox ?? file.sandbox ?? "off"),
    network: profile?.sandbox_network ?? file.sandbox_network ?? false,
    hide: [
      ...(profile?.sandbox_hide ?? []).map((p) => hidePath(p, env.HOME, profile!.file)),
      ...(file.sandbox_hide ?? []).map((p) => hidePath(p, env.HOME, where)),
    ],
    allowDomains: await allowDomains(profile?.sandbox_allow_domains ?? file.sandbox_allow_domains, profile?.sandbox_allow_domains ? profile.file : where),
  };
  if (sandbox.network && sandbox.allowDomains.length > 0) {
    throw new ConfigError("sandbox_network = true lets every host through, so sandbox_allow_domains would change nothing: give one of them");
  }
  const cfg: Config = {
    provider,
    model: flags.model ?? env.TENDRIL_MODEL ?? profile?.model ?? file.model ?? DEFAULT_MODELS[provider],
    models: profile?.models ?? file.models ?? [],
    anthropic: { apiKey: env.ANTHROPIC_API_KEY, baseUrl: env.ANTHROPIC_BASE_URL },
    openai: { apiKey: env.OPENAI_API_KEY, baseUrl: env.OPENAI_BASE_URL },
    maxTokens: positiveInt(env.TENDRIL_MAX_TOKENS ?? profile?.max_tokens ?? file.max_tokens, "TENDRIL_MAX_TOKENS") ?? 32768,
    contextWindow:
      positiveInt(env.TENDRIL_CONTEXT_WINDOW ?? profile?.context_window ?? file.context_window, "TENDRIL_CONTEXT_WINDOW") ?? 200000,
    logLevel: level,
    dev: profile?.dev ?? true,
    hookServers: hookServers(env.TENDRIL_MCP_HOOK_SERVERS ?? file.mcp_hook_servers),
    mode,
    // A profile's rules are checked before the config file's: first match wins.
    rules: [...(await parseRules(profile?.rules, profile?.file ?? "")), ...(await parseRules(file.rules, where))],
    mcp: [...(profile?.mcp ?? []), ...(file.mcp ?? [])],
    sandbox,
    shellOutput: pickShellOutput(env.TENDRIL_SHELL_OUTPUT ?? file.shell_output ?? "digest", env.TENDRIL_SHELL_OUTPUT !== undefined ? "TENDRIL_SHELL_OUTPUT" : `${where}: shell_output`),
    promptCache: pickPromptCache(env.TENDRIL_PROMPT_CACHE ?? file.prompt_cache ?? "on", env.TENDRIL_PROMPT_CACHE !== undefined ? "TENDRIL_PROMPT_CACHE" : `${where}: prompt_cache`),
    prices: parsePrices(file.prices, where),
    limits,
    paths,
  };
  const systemPrompt = profile?.system_prompt ?? file.system_prompt;
  if (systemPrompt !== undefined) cfg.systemPrompt = systemPrompt;
  if (profile) cfg.profile = profile.file;
  // An empty TENDRIL_OPENAI_API is unset: the file's openai_api (where an empty value is refused like
  // any other it does not know), else the endpoint's default.
  if (env.TENDRIL_OPENAI_API) cfg.openaiApi = pickOpenAiApi(env.TENDRIL_OPENAI_API, "TENDRIL_OPENAI_API");
  else if (file.openai_api !== undefined) cfg.openaiApi = pickOpenAiApi(file.openai_api, `${where}: openai_api`);
  if (file.prompt_cache_key !== undefined) cfg.promptCacheKey = file.prompt_cache_key;
  if (env.TENDRIL_RECORD) cfg.record = env.TENDRIL_RECORD;
  if (env.TENDRIL_REPLAY) cfg.replay = env.TENDRIL_REPLAY;
  return cfg;
}
