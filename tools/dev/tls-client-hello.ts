// Owns reading the server name (SNI) a TLS ClientHello asks for, from the first bytes a client sends
// into a CONNECT tunnel (the handshake may span records). Pure over bytes: does not read sockets or
// decide whether the name is allowed (egress-proxy.ts does).

export type ClientHelloRead =
  /** More bytes are needed. */
  | { kind: "partial" }
  /** The bytes do not start a TLS handshake. */
  | { kind: "not-tls" }
  /** A complete ClientHello; `name` is its host_name server name, absent when it sends none. */
  | { kind: "hello"; name?: string }
  | { kind: "malformed"; why: string };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 1;
const EXT_SERVER_NAME = 0;

/** The handshake bytes carried by the leading handshake records of `buf` (a cut-off record: what arrived of it). */
function handshakeBytes(buf: Buffer): { bytes: Buffer } | "not-tls" {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    if (buf[at] !== HANDSHAKE) return parts.length === 0 ? "not-tls" : { bytes: Buffer.concat(parts) };
    if (at + 5 > buf.length) return { bytes: Buffer.concat(parts) };
    if (buf[at + 1] !== 3) return "not-tls";
    const len = buf.readUInt16BE(at + 3);
    if (at + 5 + len > buf.length) return { bytes: Buffer.concat([...parts, buf.subarray(at + 5)]) };
    parts.push(buf.subarray(at + 5, at + 5 + len));
    at += 5 + len;
  }
  return { bytes: Buffer.concat(parts) };
}

/** Reads the ClientHello at the start of `buf` (what the client sent so far). */
export function readClientHelloName(buf: Buffer): ClientHelloRead {
  if (buf.length === 0) return { kind: "partial" };
  const hs = handshakeBytes(buf);
  if (hs === "not-tls") return { kind: "not-tls" };
  const { bytes } = hs;
  if (bytes.length < 4) return { kind: "partial" };
  if (bytes[0] !== CLIENT_HELLO) return { kind: "malformed", why: "the first handshake message is not a ClientHello" };
  const len = bytes.readUIntBE(1, 3);
  if (bytes.length < 4 + len) return { kind: "partial" };
  try {
    return { kind: "hello", ...serverName(bytes.subarray(4, 4 + len)) };
  } catch (err) {
    return { kind: "malformed", why: (err as Error).message };
  }
}

/** The host_name entry of the server_name extension of a ClientHello body. Throws when it is cut short. */
function serverName(body: Buffer): { name?: string } {
  let at = 2 + 32; // client_version, random
  const need = (n: number) => {
    if (at + n > body.length) throw new Error("the ClientHello is cut short");
  };
  need(1);
  at += 1 + body[at]!; // session id
  need(2);
  at += 2 + body.readUInt16BE(at); // cipher suites
  need(1);
  at += 1 + body[at]!; // compression methods
  if (at === body.length) return {}; // no extensions
  need(2);
  const end = at + 2 + body.readUInt16BE(at);
  at += 2;
  if (end > body.length) throw new Error("the ClientHello's extensions are cut short");
  while (at + 4 <= end) {
    const type = body.readUInt16BE(at);
    const len = body.readUInt16BE(at + 2);
    at += 4;
    if (at + len > end) throw new Error("a ClientHello extension is cut short");
    if (type === EXT_SERVER_NAME) return hostName(body.subarray(at, at + len));
    at += len;
  }
  return {};
}

function hostName(ext: Buffer): { name?: string } {
  if (ext.length < 2) throw new Error("the server_name extension is cut short");
  const end = Math.min(ext.length, 2 + ext.readUInt16BE(0));
  let at = 2;
  while (at + 3 <= end) {
    const type = ext[at]!;
    const len = ext.readUInt16BE(at + 1);
    at += 3;
    if (at + len > end) throw new Error("a server name is cut short");
    if (type === 0) return { name: ext.subarray(at, at + len).toString("latin1") };
    at += len;
  }
  return {};
}
