// placeholder replaced by the rg shim
export async function run(_args: string[]): Promise<number> { process.stderr.write("rg: not built yet\n"); return 2; }
