// The HTTP limit of this machine: a bare Bun.serve answering a stored copy of a real deal-list
// response, with the same headers' weight. Run by scripts/bench.ts: bun bench/bare.ts PORT FILE
export {};
const [port, file] = process.argv.slice(2);
const body = await Bun.file(file!).bytes();
Bun.serve({
  port: Number(port),
  hostname: "127.0.0.1",
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
process.stdout.write("ready\n");
