// Owns the resolved configuration: flags > environment > TOML config file > defaults, plus XDG paths.
// Does not touch the process: cli/ passes flags, env and a file reader in; errors name the bad value.
import { parse as parseToml } from "smol-toml";
import { join } from "node:path";
import { type Limits, type LimitName, LIMIT_SPECS, loadLimits, parseLimit } from "./limits.ts";
import { isLogLevel, type LogLevel } from "./log.ts";
import { type PermissionRule, parseRules as parseRuleTables, RuleError } from "./policy/rules.ts";

export type { PermissionRule };

export type ProviderName = "anthropic" | "openai" | "replay";
export type PermissionMode = "ask" | "auto-edit" | "yolo" | "read-only";
export const PERMISSION_MODES: readonly PermissionMode[] = ["ask", "auto-edit", "yolo", "read-only"];

export interface McpServerEntry {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  type?: "stdio" | "http" | "sse";
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
  anthropic: { apiKey?: string; baseUrl?: string };
  openai: { apiKey?: string; baseUrl?: string };
  maxTokens: number;
  contextWindow: number;
  /** Servers allowed to run lifecycle hooks: "*" = all, [] = none. */
  hookServers: "*" | string[];
  profile?: string;
  systemPrompt?: string;
  logLevel: LogLevel;
  mode: PermissionMode;
  rules: PermissionRule[];
  mcp: McpServerEntry[];
  record?: string;
  replay?: string;
  limits: Limits;
  paths: Paths;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ConfigFlags {
  config?: string;
  provider?: string;
  model?: string;
  profile?: string;
  mode?: string;
  log?: string;
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

function str(table: FileTable, key: string, where: string): string | undefined {
  const v = table[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new ConfigError(`${where}: ${key} must be a string`);
  return v;
}

function positiveInt(raw: string | number | undefined, what: string): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = typeof raw === "number" ? raw : Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new ConfigError(`${what} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

function pickProvider(raw: string | undefined, env: Env): ProviderName {
  if (raw === undefined || raw === "") return env.ANTHROPIC_API_KEY ? "anthropic" : "openai";
  if (raw === "anthropic" || raw === "openai" || raw === "replay") return raw;
  throw new ConfigError(`provider must be anthropic, openai or replay, got ${JSON.stringify(raw)}`);
}

/** `[[rules]]` of a config or policy file, compiled; a bad rule is a ConfigError naming file and rule. */
export function parseRules(raw: unknown, where: string): PermissionRule[] {
  try {
    return parseRuleTables(raw, where);
  } catch (err) {
    if (err instanceof RuleError) throw new ConfigError(err.message);
    throw err;
  }
}

export function parseMcpEntries(raw: unknown, where: string): McpServerEntry[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new ConfigError(`${where}: mcp must be an array of tables ([[mcp]])`);
  return raw.map((r, i) => {
    const at = `${where}: mcp[${i}]`;
    const t = (r ?? {}) as FileTable;
    const name = str(t, "name", at);
    if (!name) throw new ConfigError(`${at}: name is required`);
    const command = str(t, "command", at);
    const url = str(t, "url", at);
    if (!command === !url) throw new ConfigError(`${at}: exactly one of command or url is required`);
    const entry: McpServerEntry = { name };
    if (command) entry.command = command;
    if (url) entry.url = url;
    if (t.args !== undefined) entry.args = (t.args as unknown[]).map(String);
    if (t.env !== undefined) entry.env = Object.fromEntries(Object.entries(t.env as FileTable).map(([k, v]) => [k, String(v)]));
    if (t.headers !== undefined) {
      entry.headers = Object.fromEntries(Object.entries(t.headers as FileTable).map(([k, v]) => [k, String(v)]));
    }
    const type = str(t, "type", at);
    if (type !== undefined) {
      if (type !== "stdio" && type !== "http" && type !== "sse") throw new ConfigError(`${at}: type must be stdio, http or sse`);
      entry.type = type;
    }
    return entry;
  });
}

function fileLimits(table: FileTable): Record<string, string> {
  const raw = table.limits;
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null) throw new ConfigError("config: [limits] must be a table");
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as FileTable)) {
    const name = k.toUpperCase() as LimitName;
    if (!(name in LIMIT_SPECS)) throw new ConfigError(`config: unknown limit ${k}`);
    out[`TENDRIL_${name}`] = String(v);
    parseLimit(name, String(v));
  }
  return out;
}

/** Resolves the whole configuration. `readFile` returns undefined for a missing file. */
export function loadConfig(flags: ConfigFlags, env: Env, readFile: (path: string) => string | undefined): Config {
  const paths = resolvePaths(env, flags.config ?? env.TENDRIL_CONFIG);
  const explicit = flags.config !== undefined || !!env.TENDRIL_CONFIG;
  const file = parseConfigFile(paths.configFile, readFile(paths.configFile), explicit);
  const where = paths.configFile;
  const provider = pickProvider(flags.provider ?? env.TENDRIL_PROVIDER ?? str(file, "provider", where), env);
  const level = flags.log ?? env.TENDRIL_LOG ?? str(file, "log", where) ?? "warn";
  if (!isLogLevel(level)) throw new ConfigError(`log level must be error, warn, info or debug, got ${JSON.stringify(level)}`);
  const mode = flags.mode ?? env.TENDRIL_MODE ?? str(file, "mode", where) ?? "ask";
  if (!PERMISSION_MODES.includes(mode as PermissionMode)) {
    throw new ConfigError(`mode must be one of ${PERMISSION_MODES.join(", ")}, got ${JSON.stringify(mode)}`);
  }
  const hooksRaw = env.TENDRIL_MCP_HOOK_SERVERS ?? str(file, "mcp_hook_servers", where);
  const hookServers =
    hooksRaw === "*" ? "*" : (hooksRaw ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  const limits = loadLimits({ ...fileLimits(file), ...env });
  const cfg: Config = {
    provider,
    model: flags.model ?? env.TENDRIL_MODEL ?? str(file, "model", where) ?? DEFAULT_MODELS[provider],
    anthropic: { apiKey: env.ANTHROPIC_API_KEY, baseUrl: env.ANTHROPIC_BASE_URL },
    openai: { apiKey: env.OPENAI_API_KEY, baseUrl: env.OPENAI_BASE_URL },
    maxTokens:
      positiveInt(env.TENDRIL_MAX_TOKENS ?? (file.max_tokens as number | undefined), "TENDRIL_MAX_TOKENS") ?? 32768,
    contextWindow:
      positiveInt(env.TENDRIL_CONTEXT_WINDOW ?? (file.context_window as number | undefined), "TENDRIL_CONTEXT_WINDOW") ??
      200000,
    hookServers,
    logLevel: level,
    mode: mode as PermissionMode,
    rules: parseRules(file.rules, where),
    mcp: parseMcpEntries(file.mcp, where),
    limits,
    paths,
  };
  const profile = flags.profile ?? env.TENDRIL_PROFILE;
  if (profile) cfg.profile = profile;
  const systemPrompt = str(file, "system_prompt", where);
  if (systemPrompt !== undefined) cfg.systemPrompt = systemPrompt;
  if (env.TENDRIL_RECORD) cfg.record = env.TENDRIL_RECORD;
  if (env.TENDRIL_REPLAY) cfg.replay = env.TENDRIL_REPLAY;
  return cfg;
}
