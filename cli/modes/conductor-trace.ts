// Owns `tendril conductor trace FILE` as text: a --trace file → a sequence diagram on stdout (one lane per
// hop), filtered by session and method, coloured on a terminal. The page (--html, --serve) is trace-view.ts's.
import { TracePrinter } from "../../core/conductor/trace-print.ts";
import { traceRecords } from "../../core/conductor/trace.ts";

export interface TraceFlags {
  session?: string;
  method?: string;
  color?: boolean;
  html?: string;
  serve?: boolean;
  port?: string;
}

export async function runTracePrint(file: string, flags: TraceFlags): Promise<number> {
  const color = flags.color !== false && process.stdout.isTTY === true && !process.env.NO_COLOR;
  const skipped = { count: 0 };
  try {
    // Two passes: the first finds the hops (the diagram's lanes), the second prints as it reads.
    const hops = new Set<number>();
    const meta = {};
    for await (const r of traceRecords(file, { count: 0 }, meta)) if (typeof r.hop === "number") hops.add(r.hop);
    const printer = new TracePrinter([...hops], { session: flags.session, method: flags.method, color, ...meta });
    const write = (lines: string[]) => lines.length > 0 && process.stdout.write(lines.join("\n") + "\n");
    write([printer.header()]);
    for await (const r of traceRecords(file, skipped)) write(printer.push(r));
    write(printer.end());
  } catch (err) {
    process.stderr.write(`tendril conductor: cannot read ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  if (skipped.count > 0) process.stderr.write(`tendril conductor trace: skipped ${skipped.count} lines that are not trace records\n`);
  return 0;
}

