import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Server, startServer } from "../server";

// A Host that is not a host (`localhost:-1`, empty): Bun hands the app a bare path as the request's
// URL, and `new URL` on it threw in the web routes (a 500 the HTTP fuzz found, seed 2072572050).
const dir = mkdtempSync(join(tmpdir(), "suite-web-bad-host-"));
let server: Server;
beforeAll(async () => {
  server = await startServer(join(dir, "suite.db"));
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function raw(request: string): Promise<string> {
  const port = Number(new URL(server.url).port);
  const chunks: string[] = [];
  const { promise, resolve } = Promise.withResolvers<void>();
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: { data: (_s, d) => void chunks.push(d.toString()), close: () => resolve(), error: () => resolve() },
  });
  sock.write(request);
  // The answer's status line is all this needs; wait for it, not for a time.
  while (!/^HTTP\/1\.[01] \d{3}/.test(chunks.join(""))) await Bun.sleep(10);
  sock.end();
  await promise;
  return chunks.join("");
}

for (const host of ["localhost:-1", "", "a b", "x:99999999"]) {
  for (const [path, accept] of [["/deals", "text/html"], ["/assets/app.js", "*/*"], ["/api/v1/auth/logout", "text/html"], ["/", "text/html"]]) {
    test(`GET ${path} with Host "${host}" is answered, never a 500`, async () => {
      const answer = await raw(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)![1]);
      expect({ path, host, status: status >= 500 ? status : "not 5xx" }).toEqual({ path, host, status: "not 5xx" });
    });
  }
}
