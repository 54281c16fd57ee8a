// Owns the error a handler throws for the client to see with a JSON-RPC code (agent-server.ts turns it
// into the error answer), and the codes it is thrown with.
import { INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND } from "../wire/jsonrpc.ts";

export { INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND };

/** An error the client must see with this JSON-RPC code. */
export class AcpError extends Error {
  override name = "AcpError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}
