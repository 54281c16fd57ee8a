// Owns the release's one error type: a problem the person running the release can fix, with a message
// that says what and how. Anything else that escapes is a bug in the release script.
export class ReleaseError extends Error {
  override name = "ReleaseError";
}
