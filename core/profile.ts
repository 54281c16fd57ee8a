// Owns agent profiles: a TOML file that is the whole agent by value (provider, model, system prompt,
// mode, permission rules, MCP servers, the sandbox setting, whether the default `dev` tools are included), found by name
// in $XDG_CONFIG_HOME/tendril/agents/ or given as a path; every problem names the file, the key and
// the line. Does not merge it into the configuration (config.ts does) or start anything.
import { parse as parseToml } from "smol-toml";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { z } from "zod";
import { mcpEntrySchema } from "./mcp-entry.ts";
import { PROVIDERS } from "./llm/provider-names.ts";
import { PERMISSION_MODES } from "./policy/modes.ts";
import { SANDBOX_MODES } from "./sandbox-modes.ts";
import { firstIssue, issuePath, lazySchema, type SchemaOf } from "./zod-issue.ts";

export class ProfileError extends Error {
  override name = "ProfileError";
}

const profileSchema = lazySchema((z) =>
  z.strictObject({
      description: z.string().optional(),
      provider: z.enum(PROVIDERS).optional(),
      model: z.string().min(1).optional(),
      models: z.array(z.string().min(1)).optional(),
      max_tokens: z.number().int().positive().optional(),
      context_window: z.number().int().positive().optional(),
      mode: z.enum(PERMISSION_MODES).optional(),
      system_prompt: z.string().optional(),
      /** A file beside the profile (or absolute) whose text is the system prompt. */
      system_prompt_file: z.string().optional(),
      /** Include the default `dev` tools (shell, str_replace, todo); default true. */
      dev: z.boolean().optional(),
      rules: z.array(z.unknown()).optional(),
      mcp: z.array(mcpEntrySchema(z)).optional(),
      sandbox: z.enum(SANDBOX_MODES).optional(),
      sandbox_network: z.boolean().optional(),
      sandbox_hide: z.array(z.string().min(1)).optional(),
      sandbox_allow_domains: z.array(z.string()).optional(),
    })
    .refine((p) => p.system_prompt === undefined || p.system_prompt_file === undefined, {
      message: "give system_prompt or system_prompt_file, not both",
      path: ["system_prompt_file"],
    }),
);

export type ProfileFile = z.infer<SchemaOf<typeof profileSchema>>;

export interface Profile extends Omit<ProfileFile, "system_prompt_file"> {
  /** Where it was read from, for messages (`denied by policy: FILE rules[0]`). */
  file: string;
}

/** A profile name is a file in the agents dir; anything with a `/` or ending in `.toml` is a path. */
export function profilePath(nameOrPath: string, configDir: string, cwd: string): string {
  if (nameOrPath.includes("/") || nameOrPath.endsWith(".toml")) return isAbsolute(nameOrPath) ? nameOrPath : resolve(cwd, nameOrPath);
  if (!/^[A-Za-z0-9._-]+$/.test(nameOrPath)) throw new ProfileError(`profile name ${JSON.stringify(nameOrPath)} must be letters, digits, '.', '_' or '-' (or a path to a .toml file)`);
  return join(configDir, "agents", `${nameOrPath}.toml`);
}

/** Reads and checks a profile. Throws ProfileError `FILE:LINE: KEY: problem`. */
export async function loadProfile(file: string, readFile: (path: string) => string | undefined): Promise<Profile> {
  const text = readFile(file);
  if (text === undefined) throw new ProfileError(`profile not found: ${file} (profiles live in $XDG_CONFIG_HOME/tendril/agents/NAME.toml)`);
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (err) {
    throw new ProfileError(`${file}: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = (await profileSchema()).safeParse(raw);
  if (!parsed.success) {
    const { path, what } = firstIssue(parsed.error);
    throw new ProfileError(`${file}:${lineOf(text, path)}: ${issuePath(path) || "(top level)"}: ${what}`);
  }
  const { system_prompt_file, ...rest } = parsed.data;
  const profile: Profile = { ...rest, file };
  if (system_prompt_file !== undefined) {
    const promptPath = isAbsolute(system_prompt_file) ? system_prompt_file : join(dirname(file), system_prompt_file);
    const prompt = readFile(promptPath);
    if (prompt === undefined) {
      throw new ProfileError(`${file}:${lineOf(text, ["system_prompt_file"])}: system_prompt_file: cannot read ${promptPath}`);
    }
    profile.system_prompt = prompt;
  }
  return profile;
}

/**
 * The 1-based line a key path points at: `["model"]` (a top-level key) or `["mcp", 1, "args"]` (a key
 * of the second `[[mcp]]` table). Falls back to the table header, then to line 1.
 */
export function lineOf(text: string, path: readonly PropertyKey[]): number {
  const lines = text.split("\n");
  const keyLine = (from: number, to: number, key: PropertyKey | undefined) => {
    if (typeof key !== "string") return -1;
    const re = new RegExp(`^\\s*["']?${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']?\\s*=`);
    for (let i = from; i < to; i++) if (re.test(lines[i]!)) return i;
    return -1;
  };
  const headerAt = (i: number) => /^\s*\[/.test(lines[i]!);
  const tableEnd = (from: number) => {
    let i = from;
    while (i < lines.length && !headerAt(i)) i++;
    return i;
  };
  const [first, index, key] = path;
  if (typeof first === "string" && typeof index === "number") {
    let seen = -1;
    for (let i = 0; i < lines.length; i++) {
      if (new RegExp(`^\\s*\\[\\[\\s*${first}\\s*\\]\\]`).test(lines[i]!) && ++seen === index) {
        const at = keyLine(i + 1, tableEnd(i + 1), key);
        return (at >= 0 ? at : i) + 1;
      }
    }
  }
  const at = keyLine(0, tableEnd(0), first);
  return at >= 0 ? at + 1 : 1;
}
