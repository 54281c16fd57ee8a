// Owns the crate-fetch failure vocabulary: one CrateError with a kind per failure a user can act on.
// Exit codes for the kinds live in cli/modes/crate-fetch.ts; here only the meaning and the message.

export type CrateErrorKind =
  | "usage" // a malformed NAME[@RANGE]
  | "not-found" // the registry has no such crate
  | "no-match" // the crate exists, no version matches
  | "offline" // the registry is unreachable and nothing usable is cached
  | "checksum" // the download does not match the index's cksum
  | "hostile" // the archive breaks an extraction rule or a size/count cap
  | "failed"; // anything else (an unexpected HTTP status, a file system error)

export class CrateError extends Error {
  override name = "CrateError";
  constructor(
    readonly kind: CrateErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** Any thrown value as a CrateError, keeping the kind when it already is one. */
export function asCrateError(err: unknown): CrateError {
  if (err instanceof CrateError) return err;
  return new CrateError("failed", err instanceof Error ? err.message : String(err));
}
