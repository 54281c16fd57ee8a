// The published TypeScript conductor (@thinkwell/conductor, a library without a CLI) wrapped as a
// stdio program for the side-by-side benchmark: `bun thinkwell-conductor.ts "PROXY CMD"… "AGENT CMD"`.
import { Conductor, fromCommands, type ComponentConnection } from "@thinkwell/conductor";
import { createInterface } from "node:readline";

function stdioClient(): ComponentConnection {
  const lines = createInterface({ input: process.stdin });
  return {
    send: (message) => void process.stdout.write(JSON.stringify(message) + "\n"),
    messages: (async function* () {
      for await (const line of lines) if (line.trim() !== "") yield JSON.parse(line);
    })(),
    close: async () => lines.close(),
  };
}

const conductor = new Conductor({ instantiator: fromCommands(process.argv.slice(2)), mcpBridgeMode: "disabled" });
await conductor.connect({ connect: async () => stdioClient() });
await conductor.shutdown();
process.exit(0);
