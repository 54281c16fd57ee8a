// Owns reading this process's environment as plain strings (unset entries dropped): what a mode passes
// to its limits, components and agents.

import { inheritedEnv } from "../../core/child-env.ts";

export function processEnv(): Record<string, string> {
  return inheritedEnv(process.env);
}
