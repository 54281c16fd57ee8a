// Owns the ACP Registry entry (`acp-registry/tendril/agent.json`): the agent's `binary` distribution,
// one archive per platform with its SHA-256, run as `./tendril agent`; and the entry's check against the
// registry's agent schema (agentclientprotocol/registry agent.schema.json, draft-07, restated here as
// zod) plus the registry's extra rules we can check offline (version in archive URLs, no `/latest/`).
import { z } from "zod";
import { archiveName, type Platform, PLATFORMS } from "./platforms.ts";
import { ReleaseError } from "./release-error.ts";

const REGISTRY_PLATFORMS = ["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"] as const;
const BASE_URL_SCHEMES = ["https:", "http:", "file:"];

const env = z.record(z.string(), z.string());
const binaryTarget = z.strictObject({
  archive: z.url(),
  sha256: z.string().regex(/^[a-fA-F0-9]{64}$/).optional(),
  cmd: z.string(),
  args: z.array(z.string()).optional(),
  env: env.optional(),
});
const packageDistribution = z.strictObject({ package: z.string().min(1), args: z.array(z.string()).optional(), env: env.optional() });
export const AgentEntrySchema = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/),
  name: z.string().min(1),
  version: z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+/),
  description: z.string().min(1),
  repository: z.url().optional(),
  website: z.url().optional(),
  authors: z.array(z.string()).optional(),
  license: z.string().optional(),
  icon: z.string().optional(),
  distribution: z
    .strictObject({
      binary: z.partialRecord(z.enum(REGISTRY_PLATFORMS), binaryTarget).refine((b) => Object.keys(b).length > 0).optional(),
      npx: packageDistribution.optional(),
      uvx: packageDistribution.optional(),
    })
    .refine((d) => Object.keys(d).length > 0, "at least one distribution"),
});
export type AgentEntry = z.infer<typeof AgentEntrySchema>;

/** `--base-url` as a URL that archive names resolve under; a clear error for anything else. */
export function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.endsWith("/") ? text : `${text}/`);
  } catch {
    throw new ReleaseError(`--base-url ${JSON.stringify(text)} is not a URL; give the folder the archives will be published at, e.g. https://example.com/tendril/v1.2.3/`);
  }
  if (!BASE_URL_SCHEMES.includes(url.protocol)) {
    throw new ReleaseError(`--base-url ${JSON.stringify(text)}: unknown scheme ${url.protocol} (the registry downloads archives over https://; http:// and file:// serve local tests)`);
  }
  if (url.pathname.split("/").includes("latest")) {
    throw new ReleaseError(`--base-url ${JSON.stringify(text)}: the ACP Registry refuses archive URLs with a /latest/ folder; name the version`);
  }
  return url;
}

export interface EntryInput {
  version: string;
  description: string;
  license: string;
  baseUrl: URL;
  /** platform id → SHA-256 (hex) of its archive. */
  sha256: ReadonlyMap<string, string>;
}

export function buildAgentEntry(i: EntryInput): AgentEntry {
  const target = (p: Platform) => ({
    archive: new URL(archiveName(i.version, p), i.baseUrl).href,
    sha256: i.sha256.get(p.id),
    cmd: "./tendril",
    args: ["agent"],
  });
  const entry = {
    id: "tendril",
    name: "Tendril",
    version: i.version,
    description: i.description,
    license: i.license,
    distribution: { binary: Object.fromEntries(PLATFORMS.map((p) => [p.registryId, target(p)])) },
  };
  return checkAgentEntry(entry);
}

/** Parses an entry as the registry's CI would; throws ReleaseError naming each problem. */
export function checkAgentEntry(value: unknown): AgentEntry {
  const r = AgentEntrySchema.safeParse(value);
  if (!r.success) {
    const lines = r.error.issues.map((e) => `  ${e.path.join(".") || "(entry)"}: ${e.message}`);
    throw new ReleaseError(`the ACP Registry entry does not match the registry's schema:\n${lines.join("\n")}`);
  }
  for (const [platform, t] of Object.entries(r.data.distribution.binary ?? {})) {
    if (!t.archive.includes(r.data.version)) throw new ReleaseError(`the ${platform} archive URL does not name version ${r.data.version}: ${t.archive}`);
  }
  return r.data;
}
