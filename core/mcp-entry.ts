// Owns the `[[mcp]]` table a config file or a profile declares a server with: its schema (stdio by
// `command`, or `url` with `type` http/sse) and its plain value. Does not start servers.
import type { z } from "zod";
import type { Zod } from "./zod-issue.ts";
import { SANDBOX_MODES } from "./sandbox-modes.ts";

/** The entry's schema, built inside the config file's and the profile's own (lazy) schemas. */
export function mcpEntrySchema(z: Zod) {
  return z
    .strictObject({
      name: z.string().min(1),
      type: z.enum(["stdio", "http", "sse"]).optional(),
      command: z.string().min(1).optional(),
      args: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
      url: z.string().min(1).optional(),
      headers: z.record(z.string(), z.string()).optional(),
      /** Confine a stdio server like shell commands (SPEC §3.8); default off. */
      sandbox: z.enum(SANDBOX_MODES).optional(),
    })
    .refine((e) => !e.command !== !e.url, { message: "exactly one of command or url is required" })
    .refine((e) => e.sandbox === undefined || e.sandbox === "off" || e.command !== undefined, {
      message: "sandbox confines a server this agent starts (command), not one it reaches by url",
      path: ["sandbox"],
    });
}

export type McpServerEntry = z.infer<ReturnType<typeof mcpEntrySchema>>;
