// Owns how `tendril prompt --model/--mode` map onto what an ACP agent offers in its session/new
// answer: the config option of category `model`/`mode` (session/set_config_option) when it lists one,
// else `modes` (session/set_mode) or the older `models` state (session/set_model). Pure: no I/O.
import { isObject } from "../wire/jsonrpc.ts";

export interface WantedSettings {
  model?: string;
  mode?: string;
}

/** One request to send after session/new, in order. */
export interface SettingRequest {
  method: "session/set_config_option" | "session/set_mode" | "session/set_model";
  params: Record<string, unknown>;
}

/** The agent does not offer the asked value (or the setting at all): a usage error (exit 2). */
export class SettingError extends Error {}

interface Choice {
  value: string;
  name?: string;
}

/** A select option's values, flat or grouped (`{group, options: [...]}`). */
function selectValues(options: unknown): Choice[] {
  if (!Array.isArray(options)) return [];
  const out: Choice[] = [];
  for (const o of options) {
    if (!isObject(o)) continue;
    if (typeof o.value === "string") out.push({ value: o.value, name: typeof o.name === "string" ? o.name : undefined });
    else if (Array.isArray(o.options)) out.push(...selectValues(o.options));
  }
  return out;
}

function configOption(session: Record<string, unknown>, category: "model" | "mode"): { id: string; choices: Choice[] } | undefined {
  const list = Array.isArray(session.configOptions) ? session.configOptions : [];
  const found = list.find((o) => isObject(o) && o.category === category && typeof o.id === "string");
  return isObject(found) ? { id: found.id as string, choices: selectValues(found.options) } : undefined;
}

function listOf(entries: unknown, key: string): Choice[] {
  if (!Array.isArray(entries)) return [];
  return entries.filter(isObject).flatMap((e) => (typeof e[key] === "string" ? [{ value: e[key] as string }] : []));
}

function pick(flag: string, wanted: string, choices: Choice[]): string {
  if (choices.some((c) => c.value === wanted)) return wanted;
  const names = choices.map((c) => c.value).join(", ");
  throw new SettingError(`${flag} ${JSON.stringify(wanted)} is not offered by the agent; it offers: ${names || "(none)"}`);
}

/** The requests that apply `wanted` to a new session, or a SettingError naming the agent's choices. */
export function settingRequests(sessionId: string, session: unknown, wanted: WantedSettings): SettingRequest[] {
  const s = isObject(session) ? session : {};
  const out: SettingRequest[] = [];
  if (wanted.mode !== undefined) {
    const option = configOption(s, "mode");
    const modes = isObject(s.modes) ? listOf(s.modes.availableModes, "id") : [];
    if (option) {
      out.push({ method: "session/set_config_option", params: { sessionId, configId: option.id, value: pick("--mode", wanted.mode, option.choices) } });
    } else if (modes.length > 0) {
      out.push({ method: "session/set_mode", params: { sessionId, modeId: pick("--mode", wanted.mode, modes) } });
    } else throw new SettingError("--mode: the agent offers no session modes");
  }
  if (wanted.model !== undefined) {
    const option = configOption(s, "model");
    const models = isObject(s.models) ? listOf(s.models.availableModels, "modelId") : [];
    if (option) {
      out.push({ method: "session/set_config_option", params: { sessionId, configId: option.id, value: pick("--model", wanted.model, option.choices) } });
    } else if (models.length > 0) {
      out.push({ method: "session/set_model", params: { sessionId, modelId: pick("--model", wanted.model, models) } });
    } else throw new SettingError("--model: the agent offers no model choice");
  }
  return out;
}
