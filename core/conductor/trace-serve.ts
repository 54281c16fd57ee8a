// Owns the live trace page's server: loopback only (127.0.0.1), answering only requests addressed to
// itself by Host (a DNS-rebinding page elsewhere cannot read a trace, which holds tokens) and under a
// random token in the path (another local user or a page that guesses the port cannot either), at most
// MAX_TRACE_CONNECTIONS connections at once, the page at `/TOKEN/` and the trace as server-sent events
// at `/TOKEN/events` (each connection follows the file from its top: `reset`, `meta`, `steps` batches,
// `problem`, `ready`). Stopping ends every connection and follower.
import { createServer, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { randomHex } from "../ids.ts";
import { TraceFollower, type TraceLineError } from "./trace-follow.ts";
import { TraceSteps, type TraceStep } from "./trace-steps.ts";
import { pageCsp, tracePage, type PageData } from "./trace-view.ts";

export interface ServeOptions {
  path: string;
  /** 0: any free port. */
  port: number;
  pollMs: number;
  maxLineBytes: number;
  /** MAX_TRACE_CONNECTIONS: connections open at once; one more is closed at once. */
  maxConnections: number;
  title: string;
  filters?: PageData["filters"];
  /** Hears each line of the trace that is not part of one (once per line number). */
  problem?: (err: TraceLineError) => void;
}

export interface TraceServer {
  url: string;
  close(): Promise<void>;
}

export class PortInUseError extends Error {
  override name = "PortInUseError";
}

const PROBLEMS_REMEMBERED = 1000;

export async function serveTrace(opts: ServeOptions): Promise<TraceServer> {
  const sockets = new Set<Socket>();
  const followers = new Set<TraceFollower>();
  const reported = new Set<number>();
  let port = opts.port;
  const base = `/${randomHex(16)}/`;
  const page = () => tracePage({ title: opts.title, live: true, filters: opts.filters });

  const server = createServer((req, res) => {
    const host = req.headers.host ?? "";
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return plain(res, 403, "this server answers only http://127.0.0.1:" + port + "/\n");
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET") return plain(res, 405, "only GET\n");
    if (path === base) {
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": pageCsp(true),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      });
      return void res.end(page());
    }
    if (path === `${base}events`) return followFor(res);
    plain(res, 404, "not found\n");
  });
  server.on("connection", (s: Socket) => {
    if (sockets.size >= opts.maxConnections) return void s.destroy();
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  function followFor(res: ServerResponse): void {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", "x-content-type-options": "nosniff" });
    res.on("error", () => {}); // a page that went away: its follower stops on close
    const send = (event: string, data: unknown) => {
      if (!res.destroyed && !res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    // a reconnecting page starts over: it clears itself on `reset` and is sent everything again
    res.write("retry: 500\n\n");
    send("reset", {});
    let steps = new TraceSteps();
    let ready = false;
    const flush = (list: TraceStep[]) => list.length > 0 && send("steps", list);
    const follower = new TraceFollower(opts.path, { pollMs: opts.pollMs, maxLineBytes: opts.maxLineBytes }, {
      lines(parsed) {
        const out: TraceStep[] = [];
        for (const p of parsed) {
          if (p.kind === "meta") {
            flush(out.splice(0));
            send("meta", { components: p.components });
          } else out.push(...steps.push(p.record));
        }
        flush(out);
      },
      problem(err) {
        send("problem", { line: err.line, message: err.message });
        if (!reported.has(err.line) && reported.size < PROBLEMS_REMEMBERED) {
          reported.add(err.line);
          opts.problem?.(err);
        }
      },
      reset() {
        steps = new TraceSteps();
        send("reset", {});
      },
      idle() {
        // nothing new: an incoming message whose routed copy has not come is shown going to the conductor
        flush(steps.flush());
        if (!ready) {
          ready = true;
          send("ready", {});
        }
      },
    });
    followers.add(follower);
    const stop = () => {
      follower.stop();
      followers.delete(follower);
    };
    res.on("close", stop);
    follower.start();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      reject(err.code === "EADDRINUSE" ? new PortInUseError(`port ${opts.port} on 127.0.0.1 is in use (--port 0 takes any free port)`) : err);
    });
    server.listen(opts.port, "127.0.0.1", () => resolve());
  });
  port = (server.address() as { port: number }).port;

  return {
    url: `http://127.0.0.1:${port}${base}`,
    close: () =>
      new Promise<void>((done) => {
        for (const f of followers) f.stop();
        followers.clear();
        server.close(() => done());
        for (const s of sockets) s.destroy();
      }),
  };
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}
