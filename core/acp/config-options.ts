// Owns the session config options beyond mode and model: their ids, how each is shown (ACP
// `SessionConfigOption`, by category) and how a requested value is checked. Today `thought_level`
// (off/low/medium/high, for a provider that maps it). Applying a value is the session's (session.ts);
// mapping the level onto an API is the provider adapters' (core/llm).
import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import { THOUGHT_LEVELS, type ThoughtLevel } from "../llm/types.ts";
import { AcpError, INVALID_PARAMS } from "./convert.ts";

export const THOUGHT_OPTION_ID = "thought_level";

const THOUGHT_INFO: Record<ThoughtLevel, { name: string; description: string }> = {
  off: { name: "Off", description: "No extended reasoning requested (OpenAI-style endpoints: the model's default)" },
  low: { name: "Low", description: "A little reasoning first (Anthropic: a small thinking budget; OpenAI: reasoning effort low)" },
  medium: { name: "Medium", description: "More reasoning (Anthropic: a larger thinking budget; OpenAI: reasoning effort medium)" },
  high: { name: "High", description: "The most reasoning (Anthropic: the largest thinking budget; OpenAI: reasoning effort high)" },
};

/** `thought_level` as clients show it (category `thought_level`). */
export function thoughtOption(current: ThoughtLevel): SessionConfigOption {
  return {
    id: THOUGHT_OPTION_ID,
    name: "Thinking",
    category: "thought_level",
    type: "select",
    currentValue: current,
    options: THOUGHT_LEVELS.map((value) => ({ value, ...THOUGHT_INFO[value] })),
  };
}

/** A requested level, or -32602 naming the levels. */
export function checkThoughtLevel(value: unknown): ThoughtLevel {
  if (typeof value === "string" && THOUGHT_LEVELS.includes(value as ThoughtLevel)) return value as ThoughtLevel;
  throw new AcpError(INVALID_PARAMS, `unknown thought_level ${JSON.stringify(value)} (levels: ${THOUGHT_LEVELS.join(", ")})`);
}
