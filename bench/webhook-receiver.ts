// The bench's webhook receiver, in a process of its own (so that it takes no CPU from the sender
// being measured): answers 204 to every POST, counts them, and GET /count says how many.
let count = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    if (req.method === "GET") return new Response(String(count));
    await req.arrayBuffer();
    count++;
    return new Response(null, { status: 204 });
  },
});
console.log(server.port);
