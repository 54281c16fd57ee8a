// Owns the LLM-facing text of the dev tools: descriptions and server instructions, read from the .md
// files beside this module (embedded in the binary) with limits and the workspace filled in.
// Does not detect anything itself (see stack.ts) and holds no state.
import { formatLimit, type LimitName, type Limits } from "../../core/limits.ts";
import instructionsTemplate from "./dev-mcp-instructions.md" with { type: "text" };
import postCompactText from "./post-compact-hook.md" with { type: "text" };
import shellTemplate from "./shell.md" with { type: "text" };
import shellReadTemplate from "./shell-read.md" with { type: "text" };
import shellWriteTemplate from "./shell-write.md" with { type: "text" };
import shellKillTemplate from "./shell-kill.md" with { type: "text" };
import stopText from "./stop-hook.md" with { type: "text" };
import strReplaceTemplate from "./str-replace.md" with { type: "text" };
import todoTemplate from "./todo.md" with { type: "text" };
import { describeStack, type StackEntry } from "./stack.ts";

/** Replaces `{{NAME}}`: a value from `vars`, else the formatted limit of that name. */
export function fillTemplate(template: string, limits: Limits, vars: Record<string, string> = {}): string {
  return template
    .replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
      if (Object.hasOwn(vars, name)) return vars[name]!;
      if (name === "SHIM_OUTPUT") {
        return `${formatLimit("SHIM_OUTPUT_BYTES", limits.SHIM_OUTPUT_BYTES)} / ${limits.SHIM_OUTPUT_LINES} lines`;
      }
      if (Object.hasOwn(limits, name)) return formatLimit(name as LimitName, limits[name as LimitName]);
      return whole;
    })
    .trim();
}

export interface ToolTexts {
  shell: string;
  shellRead: string;
  shellWrite: string;
  shellKill: string;
  strReplace: string;
  todo: string;
  stop: string;
  postCompact: string;
}

export function toolDescriptions(limits: Limits): ToolTexts {
  return {
    shell: fillTemplate(shellTemplate, limits),
    shellRead: fillTemplate(shellReadTemplate, limits),
    shellWrite: fillTemplate(shellWriteTemplate, limits),
    shellKill: fillTemplate(shellKillTemplate, limits),
    strReplace: fillTemplate(strReplaceTemplate, limits),
    todo: fillTemplate(todoTemplate, limits),
    stop: stopText.trim(),
    postCompact: postCompactText.trim(),
  };
}

export function serverInstructions(root: string, stack: readonly StackEntry[], limits: Limits): string {
  return fillTemplate(instructionsTemplate, limits, { root, stack: describeStack(stack) });
}
