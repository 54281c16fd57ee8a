// Owns the version string every mode and protocol handshake reports (package.json, embedded at build time).
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
